// Package blob stores checkpoint files by key. Keys are slash-separated paths
// ("models/<model id>/jobs/<job id>/adapter_model.safetensors"); a prefix ending
// in "/" names a directory of them.
package blob

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// ErrNotFound is returned by Get for a key that holds nothing.
var ErrNotFound = errors.New("blob: not found")

// Store keeps files by key. Implementations must be safe for concurrent use.
type Store interface {
	// Put stores r's content at key, replacing what was there. A reader that
	// fails leaves no partial file visible.
	Put(ctx context.Context, key string, r io.Reader) error
	// Get opens the content at key; ErrNotFound when there is none.
	Get(ctx context.Context, key string) (io.ReadCloser, error)
	// List returns the keys under prefix, sorted.
	List(ctx context.Context, prefix string) ([]string, error)
	// DeletePrefix removes every key under prefix; nothing there is no error.
	DeletePrefix(ctx context.Context, prefix string) error
}

// Locator is implemented by stores whose files are on the local file system, so
// that a server on the same machine (vLLM loading a LoRA adapter) can read them.
type Locator interface {
	// LocalPath returns the directory or file holding key.
	LocalPath(key string) string
}

// Dir is a Store in a local directory. The zero value is not usable: set Root.
//
// Put makes what it stored durable before it returns: the file is synced,
// renamed into place, and the directories that gained an entry are synced,
// so a caller that commits a row naming the file after Put (a checkpoint)
// never commits a name whose file a crash could lose.
type Dir struct {
	// Root is the directory that holds every key; created on first Put.
	Root string
	// Sync flushes a written file, or a directory whose entries changed, to
	// stable storage. nil means (*os.File).Sync; tests set it to observe when
	// files become durable.
	Sync func(f *os.File) error
}

// NewDir returns a Dir at root (made absolute so that LocalPath names a file
// another process can open).
func NewDir(root string) (*Dir, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, err
	}
	return &Dir{Root: abs}, nil
}

func (d *Dir) file(key string) (string, error) {
	clean := path.Clean("/" + key)
	if clean == "/" || strings.Contains(key, "\\") {
		return "", fmt.Errorf("blob: bad key %q", key)
	}
	return filepath.Join(d.Root, filepath.FromSlash(clean)), nil
}

// Put implements Store: it writes a temporary file, syncs it, renames it
// into place and syncs the directory, so the file is durable when Put
// returns.
func (d *Dir) Put(ctx context.Context, key string, r io.Reader) error {
	name, err := d.file(key)
	if err != nil {
		return err
	}
	dir := filepath.Dir(name)
	if err := d.mkdirAll(dir); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, ".put-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) //nolint:errcheck // gone after the rename
	if _, err := io.Copy(tmp, contextReader{ctx, r}); err != nil {
		tmp.Close()
		return err
	}
	if err := d.sync(tmp); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), name); err != nil {
		return err
	}
	return d.syncDir(dir)
}

func (d *Dir) sync(f *os.File) error {
	if d.Sync != nil {
		return d.Sync(f)
	}
	return f.Sync()
}

// syncDir makes the entries of directory dir durable.
func (d *Dir) syncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	return d.sync(f)
}

// mkdirAll creates dir and its missing parents, syncing each parent that
// gained a directory, so that a new directory survives a crash as well as
// the files later put in it.
func (d *Dir) mkdirAll(dir string) error {
	if _, err := os.Stat(dir); err == nil {
		return nil
	}
	parent := filepath.Dir(dir)
	if parent != dir {
		if err := d.mkdirAll(parent); err != nil {
			return err
		}
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return nil
		}
		return err
	}
	return d.syncDir(parent)
}

// Get implements Store.
func (d *Dir) Get(_ context.Context, key string) (io.ReadCloser, error) {
	name, err := d.file(key)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s", ErrNotFound, key)
	}
	return f, err
}

// List implements Store.
func (d *Dir) List(_ context.Context, prefix string) ([]string, error) {
	var keys []string
	err := filepath.WalkDir(d.Root, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if e.IsDir() || strings.HasPrefix(e.Name(), ".put-") {
			return nil
		}
		rel, err := filepath.Rel(d.Root, p)
		if err != nil {
			return err
		}
		if key := filepath.ToSlash(rel); strings.HasPrefix(key, prefix) {
			keys = append(keys, key)
		}
		return nil
	})
	return keys, err
}

// DeletePrefix implements Store. A prefix ending in "/" removes that directory.
func (d *Dir) DeletePrefix(ctx context.Context, prefix string) error {
	if strings.HasSuffix(prefix, "/") {
		dir, err := d.file(prefix)
		if err != nil {
			return err
		}
		return os.RemoveAll(dir)
	}
	keys, err := d.List(ctx, prefix)
	if err != nil {
		return err
	}
	for _, k := range keys {
		name, _ := d.file(k)
		if err := os.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}

// LocalPath implements Locator.
func (d *Dir) LocalPath(key string) string {
	name, err := d.file(key)
	if err != nil {
		return ""
	}
	return name
}

type contextReader struct {
	ctx context.Context
	r   io.Reader
}

func (c contextReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// PutDir stores every regular file under dir at prefix + its relative path.
func PutDir(ctx context.Context, s Store, prefix, dir string) error {
	return filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() || !e.Type().IsRegular() {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		return s.Put(ctx, prefix+filepath.ToSlash(rel), f)
	})
}

// GetDir writes every key under prefix into dir (at its path after prefix) and
// returns how many files it wrote.
func GetDir(ctx context.Context, s Store, prefix, dir string) (int, error) {
	keys, err := s.List(ctx, prefix)
	if err != nil {
		return 0, err
	}
	for _, k := range keys {
		rel := strings.TrimPrefix(k, prefix)
		target := filepath.Join(dir, filepath.FromSlash(path.Clean("/"+rel)))
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return 0, err
		}
		if err := copyTo(ctx, s, k, target); err != nil {
			return 0, err
		}
	}
	return len(keys), nil
}

func copyTo(ctx context.Context, s Store, key, target string) error {
	r, err := s.Get(ctx, key)
	if err != nil {
		return err
	}
	defer r.Close()
	f, err := os.Create(target)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, r); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
