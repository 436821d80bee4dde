package objects

import (
	"context"
	"encoding/json"

	"github.com/uptrace/bun"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/internal/digest"
	"github.com/weftlabs/weft/objects/ref"
)

// Placeholder sources of ops the server creates itself.
const (
	placeholderOpSource        = "def func(*args, **kwargs):\n    ...  # source not captured for this op\n"
	placeholderEvaluateSource  = "def evaluate(evaluation, model):\n    \"\"\"Placeholder: evaluations created over the v2 API run elsewhere.\"\"\"\n    ...\n"
	placeholderPredictSource   = "def predict_and_score(evaluation, model, example):\n    \"\"\"Placeholder: evaluations created over the v2 API run elsewhere.\"\"\"\n    ...\n"
	placeholderSummarizeSource = "def summarize(evaluation):\n    \"\"\"Placeholder: evaluations created over the v2 API run elsewhere.\"\"\"\n    ...\n"
	placeholderScorerSummarize = "def summarize(score_rows):\n    \"\"\"Placeholder: summarising happens in the client.\"\"\"\n    ...\n"
	opSourceFile               = "obj.py"
)

// publishValue publishes a value the server composed, inside tx.
func (s *Store) publishValue(ctx context.Context, tx bun.Tx, projectID, objectID string, v digest.Value) (*ObjCreateRes, error) {
	if err := checkObjectID(objectID); err != nil {
		return nil, err
	}
	p, err := processVal(v.Compact(), nil)
	if err != nil {
		return nil, err
	}
	return s.publish(ctx, tx, projectID, objectID, digest.Bytes(p.canonical), p)
}

// publishOp stores source as obj.py and publishes the op inside tx.
func (s *Store) publishOp(ctx context.Context, tx bun.Tx, projectID, objectID, source string) (*ObjCreateRes, error) {
	fileDigest := digest.Bytes([]byte(source))
	if err := s.storeFile(ctx, tx, projectID, fileDigest, []byte(source)); err != nil {
		return nil, err
	}
	return s.publishValue(ctx, tx, projectID, objectID, digest.Obj(
		digest.M("_type", digest.Str("CustomWeaveType")),
		digest.M("weave_type", digest.Obj(digest.M("type", digest.Str("Op")))),
		digest.M("files", digest.Obj(digest.M(opSourceFile, digest.Str(fileDigest)))),
	))
}

// inTx runs fn in one transaction after checking the project.
func (s *Store) inTx(ctx context.Context, projectID string, fn func(ctx context.Context, tx bun.Tx) error) error {
	if err := checkProject(projectID); err != nil {
		return err
	}
	return s.db.RunInTx(ctx, nil, fn)
}

func createRes(r *ObjCreateRes) *V2CreateRes {
	return &V2CreateRes{Digest: r.Digest, ObjectID: r.ObjectID, VersionIndex: r.VersionIndex}
}

func (s *Store) OpCreate(ctx context.Context, req *OpCreateReq) (*V2CreateRes, error) {
	source := placeholderOpSource
	if req.SourceCode != nil {
		source = *req.SourceCode
	}
	var res *ObjCreateRes
	err := s.inTx(ctx, req.ProjectID, func(ctx context.Context, tx bun.Tx) (err error) {
		res, err = s.publishOp(ctx, tx, req.ProjectID, MakeObjectID(req.Name, "Op"), source)
		return err
	})
	if err != nil {
		return nil, err
	}
	return createRes(res), nil
}

func optionalString(s *string) digest.Value {
	if s == nil {
		return digest.NullValue()
	}
	return digest.Str(*s)
}

func weaveObject(class string, members ...digest.Member) []digest.Member {
	return append([]digest.Member{
		digest.M("_type", digest.Str(class)),
		digest.M("_class_name", digest.Str(class)),
		digest.M("_bases", digest.Arr(digest.Str("Object"), digest.Str("BaseModel"))),
	}, members...)
}

// mergeAttributes appends the members of attrs (a JSON object, or absent) to members.
func mergeAttributes(members []digest.Member, attrs json.RawMessage, field string) ([]digest.Member, error) {
	if len(attrs) == 0 || string(attrs) == "null" {
		return members, nil
	}
	v, err := digest.Parse(attrs)
	if err != nil || v.Kind != digest.Object {
		return nil, weft.Errorf(ErrInvalidRequest, "%s must be a JSON object", field)
	}
	return append(members, v.Members...), nil
}

func (s *Store) EvaluationCreate(ctx context.Context, req *EvaluationCreateReq) (*EvaluationCreateRes, error) {
	dataset, err := ref.Parse(req.Dataset)
	if err != nil {
		return nil, weft.Errorf(ErrInvalidRequest, "dataset: %v", err)
	}
	scorers := make([]digest.Value, len(req.Scorers))
	for i, sc := range req.Scorers {
		if _, err := ref.Parse(sc); err != nil {
			return nil, weft.Errorf(ErrInvalidRequest, "scorers[%d]: %v", i, err)
		}
		scorers[i] = digest.Str(sc)
	}
	trials := 1
	if req.Trials != nil {
		trials = *req.Trials
	}
	evalID := MakeObjectID(&req.Name, "Evaluation")
	if err := checkObjectID(evalID); err != nil {
		return nil, err
	}
	var res *ObjCreateRes
	err = s.inTx(ctx, req.ProjectID, func(ctx context.Context, tx bun.Tx) error {
		opDigests := make([]digest.Value, 3)
		for i, op := range []struct{ suffix, source string }{
			{"evaluate", placeholderEvaluateSource},
			{"predict_and_score", placeholderPredictSource},
			{"summarize", placeholderSummarizeSource},
		} {
			r, err := s.publishOp(ctx, tx, req.ProjectID, evalID+"."+op.suffix, op.source)
			if err != nil {
				return err
			}
			opDigests[i] = digest.Str(r.Digest)
		}
		// As in the reference server, the three fields hold op digests, not refs.
		members, err := mergeAttributes(weaveObject("Evaluation",
			digest.M("name", digest.Str(req.Name)),
			digest.M("description", optionalString(req.Description)),
			digest.M("dataset", digest.Str(req.Dataset)),
			digest.M("scorers", digest.Arr(scorers...)),
			digest.M("trials", digest.Int(int64(trials))),
			digest.M("evaluation_name", optionalString(req.EvaluationName)),
			digest.M("metadata", digest.NullValue()),
			digest.M("preprocess_model_input", digest.NullValue()),
			digest.M("on_complete", digest.NullValue()),
			digest.M("evaluate", opDigests[0]),
			digest.M("predict_and_score", opDigests[1]),
			digest.M("summarize", opDigests[2]),
		), req.EvalAttributes, "eval_attributes")
		if err != nil {
			return err
		}
		res, err = s.publishValue(ctx, tx, req.ProjectID, evalID, digest.Obj(members...))
		return err
	})
	if err != nil {
		return nil, err
	}
	evalRef := ref.Object(req.ProjectID, evalID, res.Digest).WithScheme(dataset.Scheme)
	return &EvaluationCreateRes{Digest: res.Digest, ObjectID: res.ObjectID, VersionIndex: res.VersionIndex, EvaluationRef: evalRef.String()}, nil
}

func (s *Store) DatasetCreate(ctx context.Context, req *DatasetCreateReq) (*V2CreateRes, error) {
	rows := make([]preparedRow, len(req.Rows))
	rowDigests := make([]string, len(req.Rows))
	for i, raw := range req.Rows {
		r, err := prepareRow(raw, i)
		if err != nil {
			return nil, err
		}
		rows[i], rowDigests[i] = r, r.digest
	}
	tableDigest := digest.Table(rowDigests)
	if err := checkProject(req.ProjectID); err != nil {
		return nil, err
	}
	// The table first, in short statements; then the dataset object over it.
	if err := s.writeTable(ctx, req.ProjectID, tableDigest, rows, rowDigests); err != nil {
		return nil, err
	}
	var res *ObjCreateRes
	err := s.inTx(ctx, req.ProjectID, func(ctx context.Context, tx bun.Tx) error {
		table := ref.Table(req.ProjectID, tableDigest).WithScheme(ref.SchemeWeave)
		var err error
		res, err = s.publishValue(ctx, tx, req.ProjectID, MakeObjectID(&req.Name, "Dataset"), digest.Obj(weaveObject("Dataset",
			digest.M("name", digest.Str(req.Name)),
			digest.M("description", optionalString(req.Description)),
			digest.M("rows", digest.Str(table.String())),
		)...))
		return err
	})
	if err != nil {
		return nil, err
	}
	return createRes(res), nil
}

func (s *Store) ScorerCreate(ctx context.Context, req *ScorerCreateReq) (*V2CreateRes, error) {
	scorerID := MakeObjectID(&req.Name, "Scorer")
	source := placeholderOpSource
	if req.OpSourceCode != nil {
		source = *req.OpSourceCode
	}
	var res *ObjCreateRes
	err := s.inTx(ctx, req.ProjectID, func(ctx context.Context, tx bun.Tx) error {
		score, err := s.publishOp(ctx, tx, req.ProjectID, scorerID+".score", source)
		if err != nil {
			return err
		}
		summarize, err := s.publishOp(ctx, tx, req.ProjectID, scorerID+".summarize", placeholderScorerSummarize)
		if err != nil {
			return err
		}
		opRef := func(r *ObjCreateRes) digest.Value {
			return digest.Str(ref.Op(req.ProjectID, r.ObjectID, r.Digest).WithScheme(ref.SchemeWeave).String())
		}
		res, err = s.publishValue(ctx, tx, req.ProjectID, scorerID, digest.Obj(weaveObject("Scorer",
			digest.M("name", digest.Str(req.Name)),
			digest.M("description", optionalString(req.Description)),
			digest.M("column_map", digest.NullValue()),
			digest.M("score", opRef(score)),
			digest.M("summarize", opRef(summarize)),
		)...))
		return err
	})
	if err != nil {
		return nil, err
	}
	return createRes(res), nil
}

func (s *Store) ModelCreate(ctx context.Context, req *ModelCreateReq) (*V2CreateRes, error) {
	source := placeholderOpSource
	if req.SourceCode != nil {
		source = *req.SourceCode
	}
	var res *ObjCreateRes
	err := s.inTx(ctx, req.ProjectID, func(ctx context.Context, tx bun.Tx) error {
		fileDigest := digest.Bytes([]byte(source))
		if err := s.storeFile(ctx, tx, req.ProjectID, fileDigest, []byte(source)); err != nil {
			return err
		}
		members, err := mergeAttributes(weaveObject("Model",
			digest.M("name", digest.Str(req.Name)),
			digest.M("description", optionalString(req.Description)),
			digest.M("files", digest.Obj(digest.M(opSourceFile, digest.Str(fileDigest)))),
		), req.Attributes, "attributes")
		if err != nil {
			return err
		}
		res, err = s.publishValue(ctx, tx, req.ProjectID, MakeObjectID(&req.Name, "Model"), digest.Obj(members...))
		return err
	})
	if err != nil {
		return nil, err
	}
	return createRes(res), nil
}

// familyFilter restricts a version listing to the family.
func familyFilter(f Family) *ObjectVersionFilter {
	if f == FamilyOps {
		isOp := true
		return &ObjectVersionFilter{IsOp: &isOp}
	}
	return &ObjectVersionFilter{BaseObjectClasses: []string{f.className()}}
}

func (f Family) owns(row *objectRow) bool {
	if f == FamilyOps {
		return row.Kind == kindOp
	}
	return row.Kind == kindObject && deref(row.BaseObjectClass) == f.className()
}

func (s *Store) V2Read(ctx context.Context, req *V2ReadReq) (*V2Object, error) {
	if err := checkProject(req.ProjectID); err != nil {
		return nil, err
	}
	row, err := s.readVersion(ctx, s.db, req.ProjectID, req.ObjectID, req.Digest, true)
	if err != nil {
		return nil, err
	}
	if !req.Family.owns(row) {
		return nil, weft.Errorf(ErrNotFound, "%s %s:%s not found", req.Family, req.ObjectID, req.Digest)
	}
	if row.DeletedAt != nil {
		return nil, deletedError(row)
	}
	obj := s.v2Object(ctx, req.Family, req.ProjectID, row)
	return &obj, nil
}

func (s *Store) V2List(ctx context.Context, req *V2ListReq) ([]V2Object, error) {
	if err := checkProject(req.ProjectID); err != nil {
		return nil, err
	}
	var rows []objectRow
	q := s.db.NewSelect().Model(&rows).
		Column("object_id", "digest", "version_index", "kind", "base_object_class", "val", "created_at").
		Where("o.project_id = ? AND o.deleted_at IS NULL", req.ProjectID).
		OrderExpr("o.object_id ASC, o.version_index DESC")
	q = filterVersions(q, req.ProjectID, familyFilter(req.Family))
	q = limitOffset(q, req.Limit, req.Offset)
	if err := q.Scan(ctx); err != nil {
		return nil, err
	}
	out := make([]V2Object, len(rows))
	for i := range rows {
		out[i] = s.v2Object(ctx, req.Family, req.ProjectID, &rows[i])
	}
	return out, nil
}

func (s *Store) V2Delete(ctx context.Context, req *V2DeleteReq) (*ObjDeleteRes, error) {
	if err := checkProject(req.ProjectID); err != nil {
		return nil, err
	}
	row, err := s.readVersion(ctx, s.db, req.ProjectID, req.ObjectID, "latest", false)
	if err != nil {
		return nil, err
	}
	if !req.Family.owns(row) {
		return nil, weft.Errorf(ErrNotFound, "%s %s not found", req.Family, req.ObjectID)
	}
	return s.ObjDelete(ctx, &ObjDeleteReq{ProjectID: req.ProjectID, ObjectID: req.ObjectID, Digests: req.Digests})
}

// v2Object shapes a stored version for the v2 routes.
func (s *Store) v2Object(ctx context.Context, f Family, projectID string, row *objectRow) V2Object {
	obj := V2Object{ObjectID: row.ObjectID, Digest: row.Digest, VersionIndex: row.VersionIndex, CreatedAt: row.CreatedAt.UTC()}
	v, _ := digest.Parse([]byte(row.Val))
	str := func(key string) *string {
		if m, ok := v.Get(key); ok && m.Kind == digest.String {
			return &m.Text
		}
		return nil
	}
	source := func() *string {
		code := ""
		if files, ok := v.Get("files"); ok {
			if d, ok := files.Get(opSourceFile); ok && d.Kind == digest.String {
				if content, err := s.fileContent(ctx, s.db, projectID, d.Text); err == nil {
					code = string(content)
				}
			}
		}
		return &code
	}
	opRef := func(key, suffix string) *string {
		d := str(key)
		if d == nil || ref.IsRef(*d) {
			return d
		}
		r := ref.Op(projectID, row.ObjectID+"."+suffix, *d).WithScheme(ref.SchemeWeave).String()
		return &r
	}
	switch f {
	case FamilyOps:
		obj.Code = source()
		return obj
	}
	obj.Name, obj.Description = str("name"), str("description")
	switch f {
	case FamilyEvaluations:
		obj.Dataset, obj.EvaluationName = str("dataset"), str("evaluation_name")
		obj.Scorers = []string{}
		if sc, ok := v.Get("scorers"); ok {
			for _, item := range sc.Items {
				obj.Scorers = append(obj.Scorers, item.Text)
			}
		}
		if t, ok := v.Get("trials"); ok && t.Kind == digest.Number {
			var n int
			if json.Unmarshal([]byte(t.Text), &n) == nil {
				obj.Trials = &n
			}
		}
		obj.EvaluateOp, obj.PredictAndScoreOp, obj.SummarizeOp = opRef("evaluate", "evaluate"), opRef("predict_and_score", "predict_and_score"), opRef("summarize", "summarize")
	case FamilyDatasets:
		obj.Rows = str("rows")
	case FamilyScorers:
		obj.ScoreOp, obj.SummarizeOp = str("score"), str("summarize")
	case FamilyModels:
		obj.SourceCode = source()
		attrs := digest.Obj()
		for _, m := range v.Members {
			switch m.Key {
			case "_type", "_class_name", "_bases", "name", "description", "files":
			default:
				attrs.Members = append(attrs.Members, m)
			}
		}
		obj.Attributes = attrs.Compact()
	}
	return obj
}
