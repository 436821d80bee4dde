// Package tssdk_test runs the official Weave TypeScript SDK (npm weave) and
// openai npm client under Node against the real server binary, then checks on
// the server side, over HTTP, that everything the SDK sent arrived whole: the
// SDK logs and swallows some failures, so its own view is not enough.
package tssdk_test

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/weftlabs/weft/internal/integration/e2e"
	"github.com/weftlabs/weft/internal/integration/modelserver"
	"github.com/weftlabs/weft/internal/integration/serverproc"
	"github.com/weftlabs/weft/internal/testdb"
)

func TestMain(m *testing.M) { e2e.Main(m) }

const (
	project = "admin/tssdk"
	model   = "test-model"
	// completionTokens is the model server's completion_tokens for its one
	// answer, "Hello from the model": one per word.
	completionTokens = 4
)

// scriptResult is the JSON line weave.mjs prints on success.
type scriptResult struct {
	OK           bool     `json:"ok"`
	Root         string   `json:"root"`
	TraceID      string   `json:"traceId"`
	Explode      string   `json:"explode"`
	Ask          string   `json:"ask"`
	Completions  []string `json:"completions"`
	Renamed      string   `json:"renamed"`
	Draw         string   `json:"draw"`
	PromptRef    string   `json:"promptRef"`
	ConfigRef    string   `json:"configRef"`
	DatasetRef   string   `json:"datasetRef"`
	PredictCalls []string `json:"predictCalls"`
}

// call is the part of a stream_query line the checks read.
type call struct {
	ID          string          `json:"id"`
	ProjectID   string          `json:"project_id"`
	OpName      string          `json:"op_name"`
	DisplayName *string         `json:"display_name"`
	TraceID     string          `json:"trace_id"`
	ParentID    *string         `json:"parent_id"`
	StartedAt   string          `json:"started_at"`
	EndedAt     *string         `json:"ended_at"`
	Attributes  json.RawMessage `json:"attributes"`
	Inputs      json.RawMessage `json:"inputs"`
	Output      json.RawMessage `json:"output"`
	Exception   *string         `json:"exception"`
	Summary     json.RawMessage `json:"summary"`
}

func TestWeaveSDK(t *testing.T) {
	t.Parallel()
	js, err := filepath.Abs("../js")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(js, "node_modules", "weave")); err != nil {
		t.Fatalf("run `npm ci` in internal/integration/js first (scripts/test does): %v", err)
	}
	for _, backend := range testdb.Backends {
		t.Run(backend.Name, func(t *testing.T) {
			t.Parallel()
			srv := startServer(t, backend.URL(t))
			picture := testPNG(t)
			res := runScript(t, js, srv, picture)
			checkServerSide(t, e2e.Admin(srv), res, picture)
		})
	}
}

// startServer runs the server with the chat gateway routing model to a test
// model server.
func startServer(t *testing.T, databaseURL string) *serverproc.Server {
	upstream := modelserver.New(t)
	routing := filepath.Join(t.TempDir(), "routing.yaml")
	config := fmt.Sprintf("models:\n  - name: %s\n    upstreams: [{url: %s/v1}]\n", model, upstream.URL)
	if err := os.WriteFile(routing, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	return serverproc.Start(t, serverproc.Options{DatabaseURL: databaseURL, Args: []string{"-chat-config", routing}})
}

// runScript runs weave.mjs in an empty working directory and home (the SDK
// writes weaveErrors.log to the working directory and ~/.netrc on login).
func runScript(t *testing.T, js string, srv *serverproc.Server, picture []byte) scriptResult {
	t.Helper()
	var res scriptResult
	runNode(t, js, "weave.mjs", srv, &res,
		// With a trailing slash, as people write a base URL: the SDK then
		// asks for //call/start, which the server serves as /call/start.
		"WF_TRACE_SERVER_URL="+srv.URL+"/",
		"WEFT_PROJECT="+project,
		"WEFT_MODEL="+model,
		"WEFT_PNG_BASE64="+base64.StdEncoding.EncodeToString(picture),
	)
	return res
}

// runNode runs script with env (and the server's key) in an empty working
// directory and home (the SDK writes weaveErrors.log to the working
// directory and ~/.netrc on login), fails on anything the SDK reported, and
// reads the script's last line, its JSON result with "ok": true, into res.
func runNode(t *testing.T, js, script string, srv *serverproc.Server, res any, env ...string) {
	t.Helper()
	dir := t.TempDir()
	// weave.login rewrites ~/.netrc and logs a stack trace when there is none yet.
	netrc := filepath.Join(dir, ".netrc")
	if err := os.WriteFile(netrc, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("node", filepath.Join(js, script))
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), "HOME="+dir, "WANDB_API_KEY="+srv.Key, "WEAVE_PRINT_CALL_LINK=false"), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("node %s: %v\nstdout:\n%s\nstderr:\n%s\nserver:\n%s", script, err, stdout.String(), stderr.String(), srv.Output())
	}
	if log, err := os.ReadFile(filepath.Join(dir, "weaveErrors.log")); err == nil {
		t.Fatalf("the SDK logged failed batches:\n%s", log)
	}
	if saved, err := os.ReadFile(netrc); err != nil || !strings.Contains(string(saved), srv.Key) {
		t.Fatalf("weave.login did not save the key: %q %v", saved, err)
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	last := lines[len(lines)-1]
	var ok struct {
		OK bool `json:"ok"`
	}
	if err := json.Unmarshal([]byte(last), &ok); err != nil || !ok.OK {
		t.Fatalf("script result %q: %v\nstderr:\n%s", last, err, stderr.String())
	}
	if err := json.Unmarshal([]byte(last), res); err != nil {
		t.Fatal(err)
	}
}

// testPNG is a small image for the script's image output.
func testPNG(t *testing.T) []byte {
	img := image.NewRGBA(image.Rect(0, 0, 4, 3))
	img.Set(1, 2, color.RGBA{R: 200, A: 255})
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// sdkFileDigest is the digest the SDK computes for a file it uploads and puts
// in the object that refers to it.
func sdkFileDigest(content []byte) string {
	sum := sha256.Sum256(content)
	return strings.NewReplacer("-", "X", "_", "Y").Replace(base64.RawURLEncoding.EncodeToString(sum[:]))
}

// queryCalls reads /calls/stream_query (NDJSON) with filter.
func queryCalls(t *testing.T, server e2e.Client, filter map[string]any) []call {
	return queryProjectCalls(t, server, project, filter)
}

// queryProjectCalls reads the calls of projectID that filter selects.
func queryProjectCalls(t *testing.T, server e2e.Client, projectID string, filter map[string]any) []call {
	t.Helper()
	body := server.Call(t, http.MethodPost, "/calls/stream_query", map[string]any{"project_id": projectID, "filter": filter}, nil)
	var out []call
	scanner := bufio.NewScanner(bytes.NewReader(body))
	scanner.Buffer(nil, 1<<24)
	for scanner.Scan() {
		var c call
		if err := json.Unmarshal(scanner.Bytes(), &c); err != nil {
			t.Fatalf("stream_query line %q: %v", scanner.Text(), err)
		}
		out = append(out, c)
	}
	return out
}

// readRef reads the object a weave:///entity/project/<kind>/<name>:<digest>
// ref names and returns its val.
func readRef(t *testing.T, server e2e.Client, ref string) map[string]any {
	t.Helper()
	rest, ok := strings.CutPrefix(ref, "weave:///"+project+"/")
	kind, nameDigest, ok2 := strings.Cut(rest, "/")
	name, digest, ok3 := strings.Cut(nameDigest, ":")
	if !ok || !ok2 || !ok3 || (kind != "op" && kind != "object") {
		t.Fatalf("not an object ref of %s: %q", project, ref)
	}
	var res struct {
		Obj struct {
			ObjectID string         `json:"object_id"`
			Digest   string         `json:"digest"`
			Val      map[string]any `json:"val"`
		} `json:"obj"`
	}
	server.Call(t, http.MethodPost, "/obj/read", map[string]any{"project_id": project, "object_id": name, "digest": digest}, &res)
	if res.Obj.ObjectID != name || res.Obj.Digest != digest {
		t.Fatalf("obj/read %s: got %s:%s", ref, res.Obj.ObjectID, res.Obj.Digest)
	}
	return res.Obj.Val
}

func byID(calls []call) map[string]call {
	m := map[string]call{}
	for _, c := range calls {
		m[c.ID] = c
	}
	return m
}

// opName is the op's name in a ref weave:///<project>/op/<name>:<digest>.
func opName(ref string) string {
	name, _, _ := strings.Cut(strings.TrimPrefix(ref, "weave:///"+project+"/op/"), ":")
	return name
}

func checkServerSide(t *testing.T, server e2e.Client, res scriptResult, picture []byte) {
	// The ops weave.mjs defines itself, as named functions.
	scriptOps := map[string]bool{"pipeline": true, "double": true, "addOne": true, "explode": true, "ask": true, "draw": true}
	all := queryCalls(t, server, map[string]any{})
	calls := byID(all)

	// Every op name is a ref to a published op.
	ops := map[string]bool{}
	for _, c := range all {
		if c.ProjectID != project || c.EndedAt == nil || c.StartedAt == "" {
			t.Errorf("call %s (%s) not whole: project %q ended %v", c.ID, c.OpName, c.ProjectID, c.EndedAt)
		}
		if !json.Valid(c.Attributes) || !strings.Contains(string(c.Attributes), `"source":"js-sdk"`) {
			t.Errorf("call %s attributes %s", c.ID, c.Attributes)
		}
		if ops[c.OpName] {
			continue
		}
		ops[c.OpName] = true
		// The op's source file is stored under the digest the SDK computed
		// itself and put in the op object.
		val := readRef(t, server, c.OpName)
		weaveType, _ := val["weave_type"].(map[string]any)
		files, _ := val["files"].(map[string]any)
		source, _ := files["obj.py"].(string)
		if val["_type"] != "CustomWeaveType" || weaveType["type"] != "Op" || source == "" {
			t.Errorf("op %s: %v", c.OpName, val)
			continue
		}
		content := server.Call(t, http.MethodPost, "/file/content", map[string]any{"project_id": project, "digest": source}, nil)
		if name := opName(c.OpName); scriptOps[name] && !bytes.Contains(content, []byte("function "+name+"(")) {
			t.Errorf("op %s source %q", c.OpName, content)
		}
	}

	// The pipeline trace: root → double, addOne → double.
	trace := queryCalls(t, server, map[string]any{"trace_ids": []string{res.TraceID}})
	shape := map[string]string{} // op name (parent op name) per call
	for _, c := range trace {
		parent := ""
		if c.ParentID != nil {
			parent = opName(calls[*c.ParentID].OpName)
		}
		shape[opName(c.OpName)+"<"+parent] = c.ID
	}
	want := []string{"addOne<pipeline", "double<addOne", "double<pipeline", "pipeline<"}
	got := slices.Sorted(func(yield func(string) bool) {
		for k := range shape {
			if !yield(k) {
				return
			}
		}
	})
	if !slices.Equal(got, want) || len(trace) != 4 || shape["pipeline<"] != res.Root {
		t.Errorf("pipeline trace %v (%d calls), want %v rooted at %s", got, len(trace), want, res.Root)
	}
	root := calls[res.Root]
	if root.DisplayName == nil || *root.DisplayName != "pipeline of three" || root.TraceID == res.Root {
		t.Errorf("root display name %v, trace id %s", root.DisplayName, root.TraceID)
	}
	if string(root.Output) != `{"a":6,"b":7,"label":"three"}` || !strings.Contains(string(root.Inputs), `"label":"three"`) {
		t.Errorf("root inputs %s output %s", root.Inputs, root.Output)
	}
	if renamed := calls[res.Renamed]; renamed.DisplayName == nil || *renamed.DisplayName != "renamed double" {
		t.Errorf("display name set after the call: %v", renamed.DisplayName)
	}

	// The exception.
	explode := calls[res.Explode]
	if explode.Exception == nil || *explode.Exception != "exploded: on purpose" || explode.ParentID != nil {
		t.Errorf("failed call: exception %v parent %v", explode.Exception, explode.ParentID)
	}

	// The completions: a plain and a streamed openai call under ask; ask's
	// usage is theirs, counted once.
	if len(res.Completions) != 2 {
		t.Fatalf("completions %v", res.Completions)
	}
	for _, id := range res.Completions {
		completion := calls[id]
		if opName(completion.OpName) != "openai.chat.completions.create" || completion.ParentID == nil || *completion.ParentID != res.Ask {
			t.Errorf("completion call %s parent %v", completion.OpName, completion.ParentID)
		}
	}
	var usage struct {
		CallUsage map[string]map[string]struct {
			Requests         int64 `json:"requests"`
			PromptTokens     int64 `json:"prompt_tokens"`
			CompletionTokens int64 `json:"completion_tokens"`
			TotalTokens      int64 `json:"total_tokens"`
		} `json:"call_usage"`
	}
	server.Call(t, http.MethodPost, "/calls/usage", map[string]any{"project_id": project, "call_ids": append([]string{res.Ask}, res.Completions...)}, &usage)
	for _, id := range append([]string{res.Ask}, res.Completions...) {
		requests := int64(1)
		if id == res.Ask {
			requests = 2
		}
		u := usage.CallUsage[id][model]
		if u.Requests != requests || u.PromptTokens != requests*modelserver.PromptTokens || u.CompletionTokens != requests*completionTokens ||
			u.TotalTokens != requests*(modelserver.PromptTokens+completionTokens) {
			t.Errorf("usage of %s: %+v, want %d requests' worth", id, usage.CallUsage[id], requests)
		}
	}

	// The image output refers to its bytes by the SDK's digest.
	var imageOutput struct {
		Type      string            `json:"_type"`
		WeaveType map[string]string `json:"weave_type"`
		Files     map[string]string `json:"files"`
	}
	if err := json.Unmarshal(calls[res.Draw].Output, &imageOutput); err != nil || imageOutput.Type != "CustomWeaveType" ||
		imageOutput.WeaveType["type"] != "PIL.Image.Image" || imageOutput.Files["image.png"] != sdkFileDigest(picture) {
		t.Errorf("image output %s (%v), want file digest %s", calls[res.Draw].Output, err, sdkFileDigest(picture))
	} else if content := server.Call(t, http.MethodPost, "/file/content", map[string]any{"project_id": project, "digest": imageOutput.Files["image.png"]}, nil); !bytes.Equal(content, picture) {
		t.Errorf("image bytes: %d stored, %d sent", len(content), len(picture))
	}

	// The prompt, the published object and the dataset with its rows.
	if prompt := readRef(t, server, res.PromptRef); prompt["_type"] != "StringPrompt" || prompt["content"] != "Answer: {question}" {
		t.Errorf("prompt %v", prompt)
	}
	config := readRef(t, server, res.ConfigRef)
	if config["temperature"] != 0.25 || fmt.Sprint(config["tags"]) != "[e2e sdk]" {
		t.Errorf("config %v", config)
	}
	dataset := readRef(t, server, res.DatasetRef)
	rowsRef, _ := dataset["rows"].(string)
	tableDigest, ok := strings.CutPrefix(rowsRef, "weave:///"+project+"/table/")
	if dataset["_type"] != "Dataset" || dataset["name"] != "tssdk-dataset" || !ok {
		t.Fatalf("dataset %v", dataset)
	}
	var table struct {
		Rows []struct {
			Digest string            `json:"digest"`
			Val    map[string]string `json:"val"`
		} `json:"rows"`
	}
	server.Call(t, http.MethodPost, "/table/query", map[string]any{"project_id": project, "digest": tableDigest}, &table)
	wantRows := []string{"2+2", "capital of France", `unicode ✓ "quoted"`}
	if len(table.Rows) != len(wantRows) {
		t.Fatalf("table rows %+v", table.Rows)
	}
	for i, r := range table.Rows {
		if r.Val["question"] != wantRows[i] || r.Digest == "" {
			t.Errorf("row %d: %+v, want question %q", i, r, wantRows[i])
		}
	}

	// The evaluation score: feedback on a predict call that exists.
	var feedback struct {
		Result []struct {
			FeedbackType string         `json:"feedback_type"`
			WeaveRef     string         `json:"weave_ref"`
			Payload      map[string]any `json:"payload"`
			RunnableRef  string         `json:"runnable_ref"`
			CallRef      string         `json:"call_ref"`
		} `json:"result"`
	}
	server.Call(t, http.MethodPost, "/feedback/query", map[string]any{"project_id": project}, &feedback)
	if len(feedback.Result) != 1 {
		t.Fatalf("feedback rows %+v", feedback.Result)
	}
	score := feedback.Result[0]
	predict := calls[strings.TrimPrefix(score.WeaveRef, "weave:///"+project+"/call/")]
	scorer := calls[strings.TrimPrefix(score.CallRef, "weave:///"+project+"/call/")]
	if score.FeedbackType != "wandb.runnable.exact_match" || score.Payload["output"] != true ||
		opName(predict.OpName) != "Model.predict" || scorer.ID == "" {
		t.Errorf("feedback %+v (predict op %q, scorer call %q)", score, predict.OpName, scorer.ID)
	}
	readRef(t, server, score.RunnableRef)
}
