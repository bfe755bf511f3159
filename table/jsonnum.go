package table

import (
	"math"
	"strconv"
)

// readerDouble is the double Doris's JSON reader makes of the JSON number b
// (a valid JSON number: scanNumber): RapidJSON's default parse, which is
// not always the nearest double. Its digits gather in an integer up to
// 2^53 (the digits of the fraction too), then at most 17 significant
// digits in a double, d*10 + digit; the rest are dropped; the double is
// then multiplied or divided by a power of ten once. So 123456789123.123456
// becomes 123456789123.12344 (the nearest double is ...12346), and
// 123456789123456789.12345678 becomes 123456789123456784: Doris's
// test_load_with_decimal shows both in DECIMAL columns.
func readerDouble(b []byte) float64 {
	i := 0
	digit := func() (uint64, bool) {
		if i < len(b) && b[i] >= '0' && b[i] <= '9' {
			return uint64(b[i] - '0'), true
		}
		return 0, false
	}
	minus := i < len(b) && b[i] == '-'
	if minus {
		i++
	}
	// The integer part: in 32 bits, then 64, then a double.
	var u, i64 uint64
	use64, useDouble, sig := false, false, 0
	d := 0.0
	if c, ok := digit(); ok {
		i++
		u = c
		for lead := c; lead != 0; { // a leading 0 is the whole integer part
			c, ok = digit()
			if !ok {
				break
			}
			if minus && u >= 214748364 && (u != 214748364 || c > 8) || !minus && u >= 429496729 && (u != 429496729 || c > 5) {
				i64, use64 = u, true
				break
			}
			u = u*10 + c
			sig++
			i++
		}
	}
	if use64 {
		for {
			c, ok := digit()
			if !ok {
				break
			}
			if minus && i64 >= 922337203685477580 && (i64 != 922337203685477580 || c > 8) ||
				!minus && i64 >= 1844674407370955161 && (i64 != 1844674407370955161 || c > 5) {
				d, useDouble = float64(i64), true
				break
			}
			i64 = i64*10 + c
			sig++
			i++
		}
	}
	if useDouble {
		for {
			c, ok := digit()
			if !ok {
				break
			}
			d = float64(d*10) + float64(c) // the conversion keeps d*10 rounded: no fused multiply-add
			i++
		}
	}
	expFrac := 0
	if i < len(b) && b[i] == '.' {
		i++
		if !useDouble {
			if !use64 {
				i64 = u
			}
			for {
				c, ok := digit()
				if !ok || i64 > 1<<53-1 {
					break
				}
				i64 = i64*10 + c
				expFrac--
				if i64 != 0 {
					sig++
				}
				i++
			}
			d, useDouble = float64(i64), true
		}
		for {
			c, ok := digit()
			if !ok {
				break
			}
			if sig < 17 {
				d = float64(d*10) + float64(c)
				expFrac--
				if d > 0 {
					sig++
				}
			}
			i++
		}
	}
	exp := 0
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if !useDouble {
			if use64 {
				d = float64(i64)
			} else {
				d = float64(u)
			}
			useDouble = true
		}
		expMinus := false
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			expMinus = b[i] == '-'
			i++
		}
		for {
			c, ok := digit()
			if !ok {
				break
			}
			if exp < 100000 { // past any double's range: bounded, the rest dropped
				exp = exp*10 + int(c)
			}
			i++
		}
		if expMinus {
			exp = -exp
		}
	}
	if !useDouble {
		if use64 {
			d = float64(i64)
		} else {
			d = float64(u)
		}
	} else if p := exp + expFrac; p < -308 {
		d = fastPath(fastPath(d, -308), p+308)
	} else {
		d = fastPath(d, p)
	}
	if minus {
		return -d
	}
	return d
}

// fastPath is RapidJSON's d * 10^exp, in one rounding.
func fastPath(d float64, exp int) float64 {
	switch {
	case exp < -308:
		return 0
	case exp >= 0:
		return d * pow10Double(exp)
	}
	return d / pow10Double(-exp)
}

// pow10Double is 10^n rounded to the nearest double (RapidJSON's table of
// literals); +Inf past 308.
func pow10Double(n int) float64 {
	if n <= 22 {
		return math.Pow10(n) // exact
	}
	f, _ := strconv.ParseFloat("1e"+strconv.Itoa(n), 64)
	return f
}

// jsonDecimalText is the text a JSON number b becomes on its way into a
// DECIMAL column, as Doris's reader takes it: an integer that fits in 64
// bits as written, any other number through readerDouble, as the shortest
// text of that double.
func jsonDecimalText(dst, b []byte, integral bool) []byte {
	if integral {
		if _, err := strconv.ParseInt(string(b), 10, 64); err == nil {
			return append(dst, b...)
		}
		if _, err := strconv.ParseUint(string(b), 10, 64); err == nil {
			return append(dst, b...)
		}
	}
	return strconv.AppendFloat(dst, readerDouble(b), 'g', -1, 64)
}
