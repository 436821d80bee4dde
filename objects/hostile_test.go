package objects_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/internal/testdb"
	"github.com/weftlabs/weft/objects"
)

// Strings that are not digests name no table: TableQueryStatsBatch leaves
// them out, as it does unknown digests, and never sends them to the database
// (a NUL there used to fail the whole request on both databases).
func TestTableStatsBatchHostileDigests(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *weft.DB) {
		svc := newService(t, db, objects.Config{})
		ctx := userCtx()
		table := must[*objects.TableCreateRes](t)(svc.TableCreate(ctx, &objects.TableCreateReq{Table: objects.TableSchemaForInsert{
			ProjectID: project, Rows: []json.RawMessage{json.RawMessage(`{"a":1}`)}}}))
		hostile := []string{
			"nul\x00byte", table.Digest + "\x00", "\xff\xfe", `'; DROP TABLE obj_tables; --`, `$$ || chr(0) || $$`,
			`%`, `_`, `\`, strings.Repeat("%_", 50000), strings.ToUpper(table.Digest), "",
		}
		res, err := svc.TableQueryStatsBatch(ctx, &objects.TableQueryStatsBatchReq{ProjectID: project, Digests: append(hostile, table.Digest)})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Tables) != 1 || res.Tables[0].Digest != table.Digest || res.Tables[0].Count != 1 {
			t.Fatalf("tables = %+v, want only %s", res.Tables, table.Digest)
		}
		res, err = svc.TableQueryStatsBatch(ctx, &objects.TableQueryStatsBatchReq{ProjectID: project, Digests: hostile})
		if err != nil || len(res.Tables) != 0 {
			t.Fatalf("hostile digests only: %+v %v", res, err)
		}
	})
}
