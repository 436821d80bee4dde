// Package objects stores versioned objects and ops, tables, files and the v2
// object family (ops, evaluations, datasets, scorers, models), behaving like
// the Weave trace server so that the official SDKs publish and read them
// unchanged.
//
// # Digests and versions
//
// An object's digest is the SHA-256 of its value serialised as Python's
// json.dumps(value, sort_keys=True) does it, in Weave's 43-character base64
// (see internal/digest); a client that computes a digest itself gets ours.
// Publishing a digest that is already live changes nothing; a new digest gets
// the next version_index in first-seen order, and that index survives
// deletes. is_latest marks the newest live version. Values are stored as the
// client sent them and read back with the same key order and numbers.
//
// # Tables and files
//
// Table rows are stored once per project and row digest; a table is the
// ordered list of its row digests, named by the hex SHA-256 over them. Files
// are content-addressed: uploading the same bytes again is a no-op.
//
// # Refs
//
// Ref strings (trace:/// and the clients' weave:///) are parsed by the
// [github.com/weftlabs/weft/objects/ref] package, which other domains use too.
// [Service.RefsReadBatch] follows their key, attr, index and id edges.
//
// # Using it
//
// [Service] is the contract and [Store] its implementation over a migrated
// weft database, PostgreSQL or SQLite; [New] takes a [Config] whose zero
// fields are the documented defaults ([DefaultMaxFileBytes]). The acting user
// comes from the context:
//
//	objs, err := objects.New(objects.Config{DB: db})
//	res, err := objs.ObjCreate(weft.WithPrincipal(ctx, p), &objects.ObjCreateReq{Obj: ...})
//
// Errors wrap this package's sentinels ([ErrNotFound], [ErrDigestMismatch],
// ...), each of a weft error class that decides its HTTP status. The files
// follow the layout every domain shares (see package weft): service.go,
// errors.go, types.go, config.go, store.go, store_objects.go,
// store_tables.go, store_files.go, store_refs.go and store_v2.go.
package objects
