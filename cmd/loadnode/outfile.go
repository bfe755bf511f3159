package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// replaceFile writes the file at path in full or not at all: path keeps its
// old content (or stays absent) until a complete new file replaces it.
//
// write gets a new temporary file in path's directory, created by
// os.CreateTemp (O_EXCL, a random name PATH.<digits>.tmp, mode 0600): no
// existing path, a symlink planted there included, is followed or
// overwritten. When write returns nil the file is synced, closed and
// renamed over path, and the directory is synced so that the rename
// survives a crash. If write or any of those steps fails, the temporary
// file is removed and the error names the step and the file (the os
// errors do: "sync /d/x.123.tmp: ...", "rename /d/x.123.tmp /d/x: ...").
// A process killed meanwhile leaves the temporary file behind, never a
// partial path.
func replaceFile(path string, write func(io.Writer) error) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, filepath.Base(path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("create a temporary file for %s: %w", path, err)
	}
	if err := writeSyncClose(f, write); err != nil {
		return discard(f.Name(), path, err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return discard(f.Name(), path, err)
	}
	if err := syncDir(dir); err != nil {
		return fmt.Errorf("%s was replaced, but the rename may not survive a crash: %w", path, err)
	}
	return nil
}

// writeSyncClose runs write on f, then syncs and closes f; the first error
// wins, and f is closed whatever happens.
func writeSyncClose(f *os.File, write func(io.Writer) error) error {
	err := write(f)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// discard removes the temporary file tmp of a replaceFile of path that
// failed with err, and says that path was not touched.
func discard(tmp, path string, err error) error {
	if rerr := os.Remove(tmp); rerr != nil {
		err = fmt.Errorf("%w (and the temporary file was not removed: %w)", err, rerr)
	}
	return fmt.Errorf("%w; %s left as it was", err, path)
}

// syncDir syncs a directory, making a rename in it durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}
