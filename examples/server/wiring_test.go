package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/chat"
	"github.com/weftlabs/weft/objects"
)

// Generated images are files of the server's one objects service: an image
// larger than -max-file-bytes is refused as an upload of that size is, and
// a smaller one is kept.
func TestGeneratedImagesTakeTheFileLimit(t *testing.T) {
	t.Parallel()
	const limit = 1024
	big, small := bytes.Repeat([]byte{0x89}, limit+1), bytes.Repeat([]byte{0x50}, limit/2)
	provider := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		image := small
		if strings.Contains(r.URL.Path, "big") {
			image = big
		}
		fmt.Fprintf(w, `{"created":1,"data":[{"b64_json":%q}]}`, base64.StdEncoding.EncodeToString(image))
	}))
	defer provider.Close()
	dir := t.TempDir()
	routingFile := filepath.Join(dir, "routing.yaml")
	routes := fmt.Sprintf("models:\n  - {name: big, upstreams: [{url: %q, kind: openai}]}\n  - {name: small, upstreams: [{url: %q, kind: openai}]}\n",
		provider.URL+"/big/v1", provider.URL+"/small/v1")
	if err := os.WriteFile(routingFile, []byte(routes), 0o600); err != nil {
		t.Fatal(err)
	}
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	opts := serveFlags(fs)
	if err := fs.Parse([]string{"-max-file-bytes", fmt.Sprint(limit), "-chat-config", routingFile, "-monitor-workers", "-1", "-training-workers", "0"}); err != nil {
		t.Fatal(err)
	}
	opts.training.checkpointDir = filepath.Join(dir, "checkpoints")
	ctx := context.Background()
	db, err := openDatabase(ctx, "sqlite:"+filepath.Join(dir, "weft.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	identity, err := weft.NewIdentity(weft.IdentityConfig{DB: db})
	if err != nil {
		t.Fatal(err)
	}
	var w wiring
	defer w.stop(ctx)
	if err := w.wire(ctx, db, identity, opts, slog.New(slog.DiscardHandler)); err != nil {
		t.Fatal(err)
	}

	alice := weft.WithPrincipal(ctx, weft.Principal{UserID: "u1", DefaultEntity: "alice", Admin: true})
	_, uploadErr := w.services.Objects.FileCreate(alice, &objects.FileCreateReq{ProjectID: "alice/art", Name: "upload.png", Content: big})
	if !errors.Is(uploadErr, objects.ErrFileTooLarge) {
		t.Fatalf("an upload of %d bytes: %v", len(big), uploadErr)
	}
	for _, tc := range []struct {
		model, want string
	}{
		{"big", uploadErr.Error()},
		{"small", `"files":{"image-0.png":`},
	} {
		res, err := w.services.Chat.CreateImage(alice, chat.ImageRequest{ProjectID: "alice/art",
			Inputs: json.RawMessage(fmt.Sprintf(`{"model":%q,"prompt":"a loom"}`, tc.model))})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(res.Response), tc.want) {
			t.Errorf("%s image: %s, want it to hold %q", tc.model, res.Response, tc.want)
		}
	}
}
