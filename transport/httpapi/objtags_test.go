package httpapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/internal/testdb"
)

// TestObjectTagsAndAliases sends Weave's tag and alias routes as the Python
// SDK's client sends them (ObjTagsBody, ObjSetAliasesBody,
// ObjRemoveAliasesBody; the project of the lists in the query) and reads the
// result back through obj/read and objs/query, as Weave's server answers
// them: tags and aliases sorted, "latest" on the newest live version, an
// alias usable as the digest, both gone with their version.
func TestObjectTagsAndAliases(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *weft.DB) {
		f := newWeaveFixture(t, db)
		c := objectsClient{t: t, base: f.server.URL, auth: basic("api", f.aliceKey)}
		publish := func(name string, v int) string {
			var res struct{ Digest string }
			json.Unmarshal(c.post("/obj/create", fmt.Sprintf(`{"obj":{"project_id":"alice/p","object_id":%q,"val":{"v":%d}}}`, name, v), 200, "digest"), &res)
			return res.Digest
		}
		v0, v1, other := publish("prompt", 0), publish("prompt", 1), publish("other", 0)
		send := func(method, path, body string, status int, want string) string {
			t.Helper()
			return string(c.do(method, path, "application/json", []byte(body), status, want))
		}

		send(http.MethodPut, "/objs/prompt/versions/"+v0+"/tags", `{"project_id":"alice/p","tags":["reviewed","prod","reviewed"]}`, 200, `{}`)
		send(http.MethodPut, "/objs/prompt/versions/"+v0+"/tags", `{"project_id":"alice/p","tags":["golden set","prod"]}`, 200, `{}`)
		send(http.MethodPut, "/objs/other/versions/"+other+"/tags", `{"project_id":"alice/p","tags":["prod"]}`, 200, `{}`)
		send(http.MethodPost, "/objs/prompt/versions/"+v0+"/tags/remove", `{"project_id":"alice/p","tags":["golden set","never-set"]}`, 200, `{}`)
		send(http.MethodPut, "/objs/prompt/aliases", fmt.Sprintf(`{"project_id":"alice/p","digest":%q,"aliases":["staging","candidate"]}`, v0), 200, `{}`)
		// An alias moves: staging now names v1.
		send(http.MethodPut, "/objs/prompt/aliases", fmt.Sprintf(`{"project_id":"alice/p","digest":%q,"aliases":["staging"]}`, v1), 200, `{}`)

		if got := send(http.MethodGet, "/tags?project_id=alice/p", "", 200, ""); strings.TrimSpace(got) != `{"tags":["prod","reviewed"]}` {
			t.Errorf("tags: %s", got)
		}
		if got := send(http.MethodGet, "/aliases?project_id=alice/p", "", 200, ""); strings.TrimSpace(got) != `{"aliases":["candidate","latest","staging"]}` {
			t.Errorf("aliases: %s", got)
		}

		var read struct {
			Obj struct {
				Digest  string    `json:"digest"`
				Tags    *[]string `json:"tags"`
				Aliases *[]string `json:"aliases"`
			} `json:"obj"`
		}
		readObj := func(version string, include bool) {
			t.Helper()
			read.Obj.Tags, read.Obj.Aliases = nil, nil
			json.Unmarshal(c.post("/obj/read", fmt.Sprintf(`{"project_id":"alice/p","object_id":"prompt","digest":%q,"metadata_only":false,"include_tags_and_aliases":%t}`, version, include), 200, ""), &read)
		}
		readObj("candidate", true)
		if read.Obj.Digest != v0 || fmt.Sprint(*read.Obj.Tags) != "[prod reviewed]" || fmt.Sprint(*read.Obj.Aliases) != "[candidate]" {
			t.Errorf("read by alias candidate: %+v", read.Obj)
		}
		readObj("staging", true)
		if read.Obj.Digest != v1 || len(*read.Obj.Tags) != 0 || fmt.Sprint(*read.Obj.Aliases) != "[latest staging]" {
			t.Errorf("read by alias staging: %+v", read.Obj)
		}
		if readObj("staging", false); read.Obj.Tags != nil || read.Obj.Aliases != nil {
			t.Errorf("tags and aliases not asked for: %+v", read.Obj)
		}

		query := func(filter string) string {
			t.Helper()
			var res struct {
				Objs []struct {
					ObjectID string `json:"object_id"`
					Digest   string `json:"digest"`
				} `json:"objs"`
			}
			json.Unmarshal(c.post("/objs/query", `{"project_id":"alice/p","filter":`+filter+`,"include_tags_and_aliases":true}`, 200, ""), &res)
			var names []string
			for _, o := range res.Objs {
				names = append(names, o.ObjectID+":"+map[string]string{v0: "v0", v1: "v1", other: "v0"}[o.Digest])
			}
			return strings.Join(names, " ")
		}
		for filter, want := range map[string]string{
			`{"tags":["prod"]}`:                        "prompt:v0 other:v0",
			`{"tags":["reviewed","nothing"]}`:          "prompt:v0",
			`{"aliases":["candidate"]}`:                "prompt:v0",
			`{"aliases":["latest"],"object_ids":null}`: "prompt:v1 other:v0",
			`{"aliases":["staging","candidate"]}`:      "prompt:v0 prompt:v1",
			`{"tags":["prod"],"aliases":["latest"]}`:   "other:v0",
		} {
			if got := query(filter); got != want {
				t.Errorf("objs/query %s: %q, want %q", filter, got, want)
			}
		}

		// Removing an alias, then deleting the tagged version, leaves
		// neither its tags nor its aliases.
		send(http.MethodPost, "/objs/prompt/aliases/remove", `{"project_id":"alice/p","aliases":["staging","unknown"]}`, 200, `{}`)
		c.post("/obj/read", `{"project_id":"alice/p","object_id":"prompt","digest":"staging"}`, 404, "NotFoundError")
		c.post("/obj/delete", fmt.Sprintf(`{"project_id":"alice/p","object_id":"prompt","digests":[%q]}`, v0), 200, `"num_deleted":1`)
		if got := send(http.MethodGet, "/tags?project_id=alice/p", "", 200, ""); strings.TrimSpace(got) != `{"tags":["prod"]}` {
			t.Errorf("tags after the delete: %s", got)
		}
		if got := send(http.MethodGet, "/aliases?project_id=alice/p", "", 200, ""); strings.TrimSpace(got) != `{"aliases":["latest"]}` {
			t.Errorf("aliases after the delete: %s", got)
		}

		for _, tc := range []struct {
			method, path, body string
			status             int
			want               string
		}{
			{http.MethodPut, "/objs/prompt/versions/" + v0 + "/tags", `{"project_id":"alice/p","tags":["x"]}`, 404, "not found"},
			{http.MethodPut, "/objs/prompt/versions/nope/tags", `{"project_id":"alice/p","tags":["x"]}`, 404, "not found"},
			{http.MethodPut, "/objs/prompt/versions/" + v1 + "/tags", `{"project_id":"alice/p","tags":["two  spaces"]}`, 400, "invalid tag"},
			{http.MethodPut, "/objs/prompt/versions/" + v1 + "/tags", `{"project_id":"alice/p","tags":["` + strings.Repeat("a", 257) + `"]}`, 400, "invalid tag"},
			{http.MethodPut, "/objs/prompt/versions/" + v1 + "/tags", `{"project_id":"admin/p","tags":["x"]}`, 403, "Forbidden"},
			{http.MethodPut, "/objs/prompt/versions/" + v1 + "/tags", `{"project_id":"alice/p","tags":"x"}`, 422, "tags"},
			{http.MethodPut, "/objs/prompt/aliases", fmt.Sprintf(`{"project_id":"alice/p","digest":%q,"aliases":["latest"]}`, v1), 400, "invalid alias"},
			{http.MethodPut, "/objs/prompt/aliases", fmt.Sprintf(`{"project_id":"alice/p","digest":%q,"aliases":["v3"]}`, v1), 400, "invalid alias"},
			{http.MethodPut, "/objs/prompt/aliases", fmt.Sprintf(`{"project_id":"alice/p","digest":%q,"aliases":["a/b"]}`, v1), 400, "invalid alias"},
			{http.MethodPut, "/objs/prompt/aliases", fmt.Sprintf(`{"project_id":"alice/p","digest":%q,"aliases":["s"]}`, v0), 404, "not found"},
			{http.MethodPut, "/objs/prompt/aliases", `{"project_id":"alice/p","aliases":["s"]}`, 422, "digest"},
			{http.MethodPost, "/objs/prompt/aliases/remove", `{"project_id":"admin/p","aliases":["s"]}`, 403, "Forbidden"},
			{http.MethodGet, "/tags?project_id=admin/p", ``, 403, "Forbidden"},
			{http.MethodGet, "/aliases", ``, 422, "project_id"},
		} {
			send(tc.method, tc.path, tc.body, tc.status, tc.want)
		}
	})
}
