package persistence

import (
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"syscall"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// Permissions of the data directory and its files: job specs hold client
// credentials (a SASL password, a Kinesis secret key), so nothing in the
// data directory is readable by other users.
const (
	dirPerm  os.FileMode = 0o700
	filePerm os.FileMode = 0o600
)

// privateFS is the disk (vfs.Default) creating every directory 0700 and
// every file 0600, whatever the umask. Files are chmodded through their
// descriptor right after they are created, inside a directory no one else
// can enter.
type privateFS struct{ vfs.FS }

var _ vfs.FS = privateFS{}

func (p privateFS) Unwrap() vfs.FS { return p.FS }

func private(f vfs.File, err error) (vfs.File, error) {
	if err != nil {
		return f, err
	}
	if err := syscall.Fchmod(int(f.Fd()), uint32(filePerm)); err != nil {
		f.Close()
		return nil, fmt.Errorf("persistence: chmod %o: %w", filePerm, err)
	}
	return f, nil
}

func (p privateFS) Create(name string, c vfs.DiskWriteCategory) (vfs.File, error) {
	return private(p.FS.Create(name, c))
}

func (p privateFS) OpenReadWrite(name string, c vfs.DiskWriteCategory, opts ...vfs.OpenOption) (vfs.File, error) {
	return private(p.FS.OpenReadWrite(name, c, opts...))
}

func (p privateFS) ReuseForWrite(oldname, newname string, c vfs.DiskWriteCategory) (vfs.File, error) {
	return private(p.FS.ReuseForWrite(oldname, newname, c))
}

func (p privateFS) MkdirAll(dir string, _ os.FileMode) error {
	return p.FS.MkdirAll(dir, dirPerm)
}

func (p privateFS) Lock(name string) (io.Closer, error) {
	c, err := p.FS.Lock(name)
	if err == nil {
		if cerr := os.Chmod(name, filePerm); cerr != nil {
			c.Close()
			return nil, fmt.Errorf("persistence: chmod %s: %w", name, cerr)
		}
	}
	return c, err
}

// prepareDir creates dir 0700 if it does not exist; if it exists and is
// readable or writable by others it warns (loudly: specs hold secrets)
// and leaves the mode to the operator. Files in it that others could read
// (written by an older loadnode) are narrowed to 0600.
func prepareDir(dir string, log *slog.Logger) error {
	fi, err := os.Stat(dir)
	switch {
	case os.IsNotExist(err):
		if err := os.MkdirAll(dir, dirPerm); err != nil {
			return fmt.Errorf("persistence: create %s: %w", dir, err)
		}
		// MkdirAll honours the umask; the last element is ours.
		return os.Chmod(dir, dirPerm)
	case err != nil:
		return fmt.Errorf("persistence: %w", err)
	case !fi.IsDir():
		return fmt.Errorf("persistence: %s is not a directory", dir)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		log.Warn("persistence: THE DATA DIRECTORY IS OPEN TO OTHER USERS: job specs in it hold client credentials; chmod 700 it",
			"dir", dir, "mode", fi.Mode().Perm().String())
	}
	return filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || path == dir {
			return err
		}
		if d.IsDir() {
			return filepath.SkipDir // Pebble keeps its files at the top
		}
		info, err := d.Info()
		if err != nil || !info.Mode().IsRegular() || info.Mode().Perm()&0o077 == 0 {
			return nil // gone since listed, or private already
		}
		if err := os.Chmod(path, info.Mode().Perm()&^0o077); err != nil {
			return fmt.Errorf("persistence: narrow %s to %o: %w", path, filePerm, err)
		}
		return nil
	})
}
