package training

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path"
	"sort"
	"strings"
)

// ObjectReader reads stored objects, their files and tables: what SFT data
// given as a weft object reference (weave:/// or trace:///<entity>/<project>/
// object/<name>:<version>, or wandb-artifact:///<entity>/<project>/<name>:<version>)
// needs. The objects service satisfies it through a small adapter
// ([ObjectFiles]).
type ObjectReader interface {
	// ReadObject returns the value of object objectID at version (a digest or an
	// alias such as "latest" or "v0").
	ReadObject(ctx context.Context, projectID, objectID, version string) (json.RawMessage, error)
	// ReadFile returns the content of the file with digest.
	ReadFile(ctx context.Context, projectID, digest string) ([]byte, error)
	// ReadTable calls yield with each row of the table with digest, in
	// order, until yield returns an error.
	ReadTable(ctx context.Context, projectID, digest string, yield func(row json.RawMessage) error) error
}

// dataRef is a parsed training_data_url.
type dataRef struct {
	url       string // http(s)
	projectID string // object refs
	objectID  string
	version   string
}

// parseDataURL accepts http(s) URLs and object references; it checks the
// shape only (whether the data exists is found out when the job runs).
func parseDataURL(raw string) (dataRef, error) {
	const field = "training_data_url"
	u, err := url.Parse(raw)
	if err != nil || raw == "" {
		return dataRef{}, fieldErrorf(field, "must be an http(s) URL or a weave:///, trace:/// or wandb-artifact:/// reference")
	}
	switch u.Scheme {
	case "http", "https":
		if u.Host == "" {
			return dataRef{}, fieldErrorf(field, "URL has no host")
		}
		return dataRef{url: raw}, nil
	case "weave", "trace", "wandb-artifact":
		rest := strings.TrimLeft(strings.TrimPrefix(raw, u.Scheme+":"), "/")
		parts := strings.Split(rest, "/")
		if u.Scheme != "wandb-artifact" {
			if len(parts) != 4 || parts[2] != "object" {
				return dataRef{}, fieldErrorf(field, "a %s reference must be %s:///<entity>/<project>/object/<name>:<version>", u.Scheme, u.Scheme)
			}
			parts = []string{parts[0], parts[1], parts[3]}
		}
		if len(parts) != 3 || parts[0] == "" || parts[1] == "" {
			return dataRef{}, fieldErrorf(field, "an artifact reference must be wandb-artifact:///<entity>/<project>/<name>:<version>")
		}
		name, version, ok := strings.Cut(parts[2], ":")
		if !ok || name == "" || version == "" {
			version = "latest"
		}
		return dataRef{projectID: parts[0] + "/" + parts[1], objectID: name, version: version}, nil
	}
	return dataRef{}, fieldErrorf(field, "scheme %q is not supported: use http(s), weave:///, trace:/// or wandb-artifact:///", u.Scheme)
}

// dataError is a problem with the training data: it fails the job at once (a
// retry would read the same data). The same holds for a job no trainer runs,
// which wraps [ErrNoTrainer].
type dataError struct {
	msg  string
	kind error
}

func (e *dataError) Error() string { return e.msg }
func (e *dataError) Unwrap() error { return e.kind }

func dataErrorf(format string, args ...any) error {
	return &dataError{msg: fmt.Sprintf(format, args...)}
}

// fetchSFTData streams the training data named by ref to file, checking each
// line on the way, and returns the number of conversations in it. At most one
// line is held in memory; data over MaxDataBytes fails the job once that many
// bytes have arrived, and ctx ending stops it at the next read or line.
func (s *Store) fetchSFTData(ctx context.Context, ref dataRef, file string) (int, error) {
	var src io.ReadCloser
	var err error
	if ref.url != "" {
		src, err = s.openHTTP(ctx, ref.url)
	} else {
		src, err = s.openObject(ctx, ref)
	}
	if err != nil {
		return 0, err
	}
	defer src.Close()
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return 0, err
	}
	n, err := copyConversations(ctx, f, src, s.cfg.MaxDataBytes)
	if cerr := f.Close(); err == nil && cerr != nil {
		return 0, cerr
	}
	return n, err
}

// openHTTP starts the download of u, under the host policy.
func (s *Store) openHTTP(ctx context.Context, u string) (io.ReadCloser, error) {
	if err := s.checkDataHost(dataRef{url: u}); err != nil {
		return nil, &dataError{msg: errDataHostRefused.Error()} // the operator's list changed since the job was created
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, dataErrorf("training data URL %s: %v", u, err)
	}
	resp, err := s.dataClient.Do(req)
	if err != nil {
		return nil, downloadError(ctx, u, err)
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		return nil, dataErrorf("training data could not be downloaded from %s: HTTP %d", u, resp.StatusCode)
	}
	return &downloadBody{ctx: ctx, url: u, body: resp.Body}, nil
}

// downloadBody is a response body whose read errors are the job's errors
// (downloadError).
type downloadBody struct {
	ctx  context.Context
	url  string
	body io.ReadCloser
}

func (b *downloadBody) Read(p []byte) (int, error) {
	n, err := b.body.Read(p)
	if err != nil && err != io.EOF {
		err = downloadError(b.ctx, b.url, err)
	}
	return n, err
}

func (b *downloadBody) Close() error { return b.body.Close() }

// openObject opens the training data of an object reference: the rows of
// a Weave Dataset (see [datasetRows]), or the JSON-lines file of an
// artifact (see [fetchArtifact]).
func (s *Store) openObject(ctx context.Context, ref dataRef) (io.ReadCloser, error) {
	name := ref.projectID + "/" + ref.objectID + ":" + ref.version
	if s.cfg.Objects == nil {
		return nil, dataErrorf("training data %s is an object reference, but this server reads training data only from http(s) URLs", name)
	}
	val, err := s.cfg.Objects.ReadObject(ctx, ref.projectID, ref.objectID, ref.version)
	if err != nil {
		return nil, dataErrorf("training data object %s could not be read: %v", name, err)
	}
	if table, ok := datasetTable(ref.projectID, val); ok {
		return s.datasetRows(ctx, name, ref.projectID, table), nil
	}
	data, err := s.fetchArtifact(ctx, name, ref, val) // a stored file: bounded by the objects service's file size
	if err != nil {
		return nil, err
	}
	return io.NopCloser(bytes.NewReader(data)), nil
}

// fetchArtifact reads an artifact stored as an object whose value val lists
// its files ({"files": {"train.jsonl": "<digest>", ...}} anywhere in the
// value) and returns train.jsonl, else trajectories.jsonl, else the only
// *.jsonl file.
func (s *Store) fetchArtifact(ctx context.Context, name string, ref dataRef, val json.RawMessage) ([]byte, error) {
	files := findFiles(val)
	if len(files) == 0 {
		return nil, dataErrorf("training data object %s holds no files", name)
	}
	var chosen string
	for _, want := range []string{"train.jsonl", "trajectories.jsonl"} {
		if _, ok := files[want]; ok {
			chosen = want
			break
		}
	}
	if chosen == "" {
		var jsonl []string
		for f := range files {
			if strings.HasSuffix(f, ".jsonl") {
				jsonl = append(jsonl, f)
			}
		}
		sort.Strings(jsonl)
		if len(jsonl) != 1 {
			return nil, dataErrorf("training data object %s must hold train.jsonl, trajectories.jsonl or exactly one .jsonl file (found %d)", name, len(jsonl))
		}
		chosen = jsonl[0]
	}
	data, err := s.cfg.Objects.ReadFile(ctx, ref.projectID, files[chosen])
	if err != nil {
		return nil, dataErrorf("file %s of training data object %s could not be read: %v", chosen, name, err)
	}
	return data, nil
}

// findFiles finds the first {"files": {name: digest}} map in an object value.
func findFiles(val json.RawMessage) map[string]string {
	var obj map[string]json.RawMessage
	if json.Unmarshal(val, &obj) != nil {
		return nil
	}
	if raw, ok := obj["files"]; ok {
		var files map[string]string
		if json.Unmarshal(raw, &files) == nil && len(files) > 0 {
			out := make(map[string]string, len(files))
			for k, v := range files {
				out[path.Base(k)] = v
			}
			return out
		}
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if files := findFiles(obj[k]); files != nil {
			return files
		}
	}
	return nil
}

// copyConversations copies r to w line by line, checking that every
// non-empty line is a conversation (an object with "messages" or
// "messages_and_choices"), and returns how many there are. It holds one line
// at a time (at most [MaxDataLineBytes]), fails once r passes maxBytes, and
// stops when ctx ends.
func copyConversations(ctx context.Context, w io.Writer, r io.Reader, maxBytes int64) (int, error) {
	limited := &io.LimitedReader{R: r, N: maxBytes + 1}
	tooLarge := func() error {
		return dataErrorf("training data is larger than %d bytes, the most this server takes (-training-data-max-bytes)", maxBytes)
	}
	scanner := bufio.NewScanner(limited)
	scanner.Buffer(make([]byte, 0, 64<<10), MaxDataLineBytes)
	out := bufio.NewWriterSize(w, 64<<10)
	n, line := 0, 0
	for scanner.Scan() {
		line++
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		if limited.N <= 0 {
			return 0, tooLarge()
		}
		if err := checkConversation(line, scanner.Bytes()); err != nil {
			return 0, err
		} else if len(bytes.TrimSpace(scanner.Bytes())) > 0 {
			n++
		}
		if _, err := out.Write(scanner.Bytes()); err != nil {
			return 0, err
		}
		if err := out.WriteByte('\n'); err != nil {
			return 0, err
		}
	}
	if limited.N <= 0 {
		return 0, tooLarge()
	}
	if err := scanner.Err(); err != nil {
		var dataErr *dataError
		switch {
		case errors.Is(err, bufio.ErrTooLong):
			return 0, dataErrorf("training data line %d is longer than %d bytes", line+1, MaxDataLineBytes)
		case errors.As(err, &dataErr) || ctx.Err() != nil:
			return 0, err
		}
		return 0, dataErrorf("training data could not be read: %v", err)
	}
	if n == 0 {
		return 0, dataErrorf("training data holds no conversations")
	}
	return n, out.Flush()
}

// checkConversation checks line number line of the data: empty, or a
// conversation.
func checkConversation(line int, text []byte) error {
	text = bytes.TrimSpace(text)
	if len(text) == 0 {
		return nil
	}
	var conv struct {
		Messages           []json.RawMessage `json:"messages"`
		MessagesAndChoices []json.RawMessage `json:"messages_and_choices"`
	}
	if err := json.Unmarshal(text, &conv); err != nil {
		return lineError(line, err)
	}
	if conv.Messages == nil && conv.MessagesAndChoices == nil {
		return dataErrorf("training data line %d has neither messages nor messages_and_choices", line)
	}
	return nil
}

// lineError says what is wrong with a line of training data without quoting
// it: the bytes came from wherever the URL pointed, and an error event must
// not carry them back to the job's owner.
func lineError(line int, err error) error {
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syntax):
		return dataErrorf("training data line %d is not JSON (syntax error at byte %d of the line)", line, syntax.Offset)
	case errors.As(err, &typ):
		return dataErrorf("training data line %d: %s is a JSON %s, want an object or an array of messages", line, cmp.Or(typ.Field, "the line"), typ.Value)
	}
	return dataErrorf("training data line %d is not a JSON object", line)
}
