package training

import (
	"context"
	"encoding/json"

	"github.com/weftlabs/weft/objects"
)

// ObjectFiles is the ObjectReader over the objects service: the usual one, for
// a server whose clients publish SFT data as weft objects (an artifact whose
// value lists its files by digest).
func ObjectFiles(svc objects.Service) ObjectReader { return objectFiles{svc: svc} }

type objectFiles struct {
	svc objects.Service
}

// ReadObject implements ObjectReader.
func (o objectFiles) ReadObject(ctx context.Context, projectID, objectID, version string) (json.RawMessage, error) {
	res, err := o.svc.ObjRead(ctx, &objects.ObjReadReq{ProjectID: projectID, ObjectID: objectID, Digest: version})
	if err != nil {
		return nil, err
	}
	return res.Obj.Val, nil
}

// ReadFile implements ObjectReader.
func (o objectFiles) ReadFile(ctx context.Context, projectID, digest string) ([]byte, error) {
	res, err := o.svc.FileContent(ctx, &objects.FileContentReq{ProjectID: projectID, Digest: digest})
	if err != nil {
		return nil, err
	}
	return res.Content, nil
}
