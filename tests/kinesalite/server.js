// Starts kinesalite (a local Kinesis) for loadnode's tests, bound to
// 127.0.0.1 only (kinesalite's own CLI listens on every interface).
//
//   node server.js [port]
//
// A port of 0 or none picks a free port. Once listening it prints exactly one
// line on stdout,
//
//   kinesalite listening 127.0.0.1:PORT
//
// which sources/kinesis/kinesistest parses. Streams live in memory and are
// created, deleted, split and merged without delay. The process exits on
// SIGTERM/SIGINT or when its stdin closes (so it dies with its parent).
'use strict'

const kinesalite = require('kinesalite')

const port = Number(process.argv[2] || process.env.KINESALITE_PORT || 0)
if (!Number.isInteger(port) || port < 0 || port > 65535) {
  console.error('kinesalite: bad port ' + process.argv[2])
  process.exit(2)
}

const server = kinesalite({createStreamMs: 0, deleteStreamMs: 0, updateStreamMs: 0, shardLimit: 100})

// kinesalite throws from a request's 'error' event (index.js:
// `req.on('error', function(err) { throw err })`), so a client killed in
// the middle of sending a request (the chaos and kill tests SIGKILL nodes)
// took the whole server down with "Error: aborted" (ECONNRESET). A real
// Kinesis endpoint drops such a request; so does this one, and says so on
// stderr. Anything else still ends the process.
process.on('uncaughtException', (err) => {
  if (err && (err.code === 'ECONNRESET' || err.code === 'ECONNABORTED' || err.message === 'aborted')) {
    console.error('kinesalite: dropped a request its client aborted: ' + err.message)
    return
  }
  console.error('kinesalite: ' + ((err && err.stack) || err))
  process.exit(1)
})

server.on('error', (err) => {
  console.error('kinesalite: ' + (err.stack || err))
  process.exit(1)
})

server.listen(port, '127.0.0.1', () => {
  const addr = server.address()
  process.stdout.write('kinesalite listening 127.0.0.1:' + addr.port + '\n')
})

function stop() {
  server.close(() => process.exit(0))
  setTimeout(() => process.exit(0), 1000).unref()
}
process.on('SIGTERM', stop)
process.on('SIGINT', stop)
process.stdin.on('end', stop)
process.stdin.on('error', stop)
process.stdin.resume()
