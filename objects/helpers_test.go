package objects_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/objects"
)

const project = "acme/proj"

func newService(t testing.TB, db *weft.DB, cfg objects.Config) objects.Service {
	t.Helper()
	cfg.DB = db
	svc, err := objects.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return svc
}

func userCtx() context.Context {
	return weft.WithPrincipal(context.Background(), weft.Principal{UserID: "user-1", Username: "alice"})
}

func must[T any](t testing.TB) func(T, error) T {
	return func(v T, err error) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

func wantErr(t testing.TB, err error, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("error = %v; want %v", err, target)
	}
}

func create(t testing.TB, svc objects.Service, objectID, val string) *objects.ObjCreateRes {
	t.Helper()
	res, err := svc.ObjCreate(userCtx(), &objects.ObjCreateReq{Obj: objects.ObjSchemaForInsert{ProjectID: project, ObjectID: objectID, Val: json.RawMessage(val)}})
	if err != nil {
		t.Fatalf("ObjCreate(%s, %s): %v", objectID, val, err)
	}
	return res
}

func read(t testing.TB, svc objects.Service, objectID, version string) objects.ObjSchema {
	t.Helper()
	res, err := svc.ObjRead(userCtx(), &objects.ObjReadReq{ProjectID: project, ObjectID: objectID, Digest: version})
	if err != nil {
		t.Fatalf("ObjRead(%s, %s): %v", objectID, version, err)
	}
	return res.Obj
}

func ptr[T any](v T) *T { return &v }
