package objects

import (
	"context"
	"encoding/json"
	"errors"
	"slices"

	"github.com/uptrace/bun"
)

// ChangeHook is told of the publishes and deletes of the objects of the
// base classes it watches, so that a domain which acts on such objects (a
// monitor that scores calls) can refuse one it cannot run and keep its own
// view of them in step, in the same transaction.
type ChangeHook interface {
	// Classes are the base object classes the hook watches ("Monitor").
	Classes() []string
	// CheckPublish runs before an object of a watched class is published,
	// outside any transaction and with the publisher's context, on the
	// value as sent; an error refuses the publish (a weft error keeps its
	// class: ErrInvalid is a 400).
	CheckPublish(ctx context.Context, projectID, objectID string, val json.RawMessage) error
	// ObjectChanged runs inside the transaction that published or deleted
	// versions of a watched object, after the change; an error fails it.
	// It must read and write only through tx.
	ObjectChanged(ctx context.Context, tx bun.Tx, change ObjectChange) error
}

// ObjectChange is a change to one object.
type ObjectChange struct {
	ProjectID string
	ObjectID  string
	// Latest is the object's newest live version after the change, with its
	// value; nil when no live version is left.
	Latest *ObjSchema
	// Published is the version a publish stored or published again (an
	// earlier version's value sent anew, which keeps its index and so is
	// not Latest), with its value; nil for a delete.
	Published *ObjSchema
}

// watched reports whether the hook watches objects of base class base.
func (s *Store) watched(base *string) bool {
	return s.cfg.Hook != nil && base != nil && slices.Contains(s.cfg.Hook.Classes(), *base)
}

// objectChanged tells the hook of a change to a watched object, with its
// newest live version read in tx and, after a publish, the version published
// (digest; "" for a delete).
func (s *Store) objectChanged(ctx context.Context, tx bun.Tx, projectID, objectID, published string) error {
	change := ObjectChange{ProjectID: projectID, ObjectID: objectID}
	row, err := s.readVersion(ctx, tx, projectID, objectID, "latest", true)
	if err == nil && row.DeletedAt == nil {
		latest := row.schema(false, false)
		change.Latest = &latest
	}
	if err != nil && !errors.Is(err, ErrNotFound) {
		return err
	}
	switch {
	case published == "":
	case change.Latest != nil && change.Latest.Digest == published:
		change.Published = change.Latest
	default:
		row, err := s.readVersion(ctx, tx, projectID, objectID, published, true)
		if err != nil {
			return err
		}
		v := row.schema(false, false)
		change.Published = &v
	}
	return s.cfg.Hook.ObjectChanged(ctx, tx, change)
}

// deletedChanged tells the hook of a delete of versions of objectID, when
// it watches the object's class.
func (s *Store) deletedChanged(ctx context.Context, tx bun.Tx, projectID, objectID string) error {
	if s.cfg.Hook == nil {
		return nil
	}
	var base *string
	err := tx.NewSelect().Model((*objectRow)(nil)).Column("base_object_class").
		Where("o.project_id = ? AND o.object_id = ?", projectID, objectID).Limit(1).Scan(ctx, &base)
	if err != nil || !s.watched(base) {
		return err
	}
	return s.objectChanged(ctx, tx, projectID, objectID, "")
}
