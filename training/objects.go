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

// tablePage is how many rows ReadTable reads at a time.
const tablePage = 500

// ReadTable implements ObjectReader.
func (o objectFiles) ReadTable(ctx context.Context, projectID, digest string, yield func(json.RawMessage) error) error {
	for offset := 0; ; {
		limit := tablePage
		res, err := o.svc.TableQuery(ctx, &objects.TableQueryReq{ProjectID: projectID, Digest: digest, Limit: &limit, Offset: &offset})
		if err != nil {
			return err
		}
		for _, row := range res.Rows {
			if err := yield(row.Val); err != nil {
				return err
			}
		}
		if len(res.Rows) < limit {
			return nil
		}
		offset += len(res.Rows)
	}
}
