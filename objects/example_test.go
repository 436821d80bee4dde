package objects_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/objects"
)

func ExampleService_ObjCreate() {
	ctx := context.Background()
	db, _ := weft.Open(ctx, "sqlite::memory:")
	defer db.Close()
	_ = weft.Migrate(ctx, db)
	svc, _ := objects.New(objects.Config{DB: db})

	publish := func(val string) *objects.ObjCreateRes {
		res, err := svc.ObjCreate(ctx, &objects.ObjCreateReq{Obj: objects.ObjSchemaForInsert{
			ProjectID: "acme/demo", ObjectID: "prompt", Val: json.RawMessage(val)}})
		if err != nil {
			panic(err)
		}
		return res
	}
	first := publish(`{"text": "Hello", "temperature": 1.0}`)
	same := publish(`{"temperature":1.0,"text":"Hello"}`) // same content, same digest
	second := publish(`{"text": "Hi", "temperature": 1.0}`)
	fmt.Println(first.Digest, first.VersionIndex) // Python json.dumps + hashlib give the same digest
	fmt.Println(same.Digest == first.Digest, same.VersionIndex)
	fmt.Println(second.VersionIndex)

	latest, _ := svc.ObjRead(ctx, &objects.ObjReadReq{ProjectID: "acme/demo", ObjectID: "prompt", Digest: "latest"})
	fmt.Println(string(latest.Obj.Val), latest.Obj.IsLatest)
	// Output:
	// cj7nBK8FwXsANKTU23eS6gEvTqm3acKvaaGAY9XY3uE 0
	// true 0
	// 1
	// {"text": "Hi", "temperature": 1.0} 1
}
