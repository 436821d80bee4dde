package webui

import (
	"net/http"
	"strings"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/objects"
	"github.com/weftlabs/weft/training"
)

// A dataset version's page starts a supervised fine-tuning job on it: the
// version's ref is the job's training_data_url, as the SFT route takes it,
// and the model is one of the project's trained models (its base model one
// the server serves). Closing the loop from the trace list: calls selected
// by a verdict become a dataset version, and the version trains a model.

// datasetClass is the base class of the objects the SFT form is offered on.
const datasetClass = "Dataset"

// maxTrainModels bounds the models the SFT form offers.
const maxTrainModels = 100

// trainOffer is the SFT form of a dataset version's page.
type trainOffer struct {
	Action string
	Models []training.Model
}

// trainOfferOf is the SFT form for a dataset version of projectID, nil
// when the server trains no models or the object is no dataset.
func (h *Handler) trainOfferOf(r *http.Request, projectID string, o *objects.ObjSchema) (*trainOffer, error) {
	if h.cfg.Training == nil || o.BaseObjectClass == nil || *o.BaseObjectClass != datasetClass {
		return nil, nil
	}
	page, err := h.cfg.Training.ListModels(r.Context(), projectID, training.ListParams{Limit: maxTrainModels, Order: training.OrderDesc})
	if err != nil {
		return nil, err
	}
	return &trainOffer{Action: projectPath(projectID, "objects/", pathSegment(o.ObjectID), "/versions/", pathSegment(o.Digest), "/train"),
		Models: page.Data}, nil
}

// trainOnDataset answers POST …/objects/{name}/versions/{version}/train: an
// SFT job of the chosen model of the project on that dataset version; the
// answer goes on to the job's page.
func (h *Handler) trainOnDataset(w http.ResponseWriter, r *http.Request, v *viewer, projectID string) {
	if h.cfg.Training == nil || h.cfg.Objects == nil {
		h.refuse(w, r, weft.Errorf(errNoTraining, "This server has no training service."))
		return
	}
	ctx := r.Context()
	if err := h.cfg.Authorizer.Authorize(ctx, v.principal, projectID, true); err != nil {
		h.refuse(w, r, err)
		return
	}
	name, version := r.PathValue("name"), r.PathValue("version")
	if len(name) > maxObjectNameLength || len(version) > maxObjectNameLength {
		h.refuse(w, r, weft.Errorf(errBadView, "object name and version: at most %d characters", maxObjectNameLength))
		return
	}
	res, err := h.cfg.Objects.ObjRead(ctx, &objects.ObjReadReq{ProjectID: projectID, ObjectID: name, Digest: version})
	if err != nil {
		h.refuse(w, r, err)
		return
	}
	if o := res.Obj; o.BaseObjectClass == nil || *o.BaseObjectClass != datasetClass {
		h.refuse(w, r, weft.Errorf(errBadView, "%s is not a dataset", truncate(name, 80)))
		return
	}
	modelID := strings.TrimSpace(r.PostFormValue("model"))
	if modelID == "" || len(modelID) > maxIDLength {
		h.refuse(w, r, weft.Errorf(errBadView, "model: choose a model to train"))
		return
	}
	model, err := h.cfg.Training.GetModel(ctx, modelID)
	if err == nil && model.ProjectID() != projectID {
		err = weft.Errorf(training.ErrModelNotFound, "This project has no model %q.", truncate(modelID, 80))
	}
	if err != nil {
		h.refuse(w, r, err)
		return
	}
	dataURL := "weave:///" + projectID + "/object/" + res.Obj.ObjectID + ":" + res.Obj.Digest
	job, err := h.cfg.Training.CreateSFTJob(ctx, &training.CreateSFTJobReq{ModelID: model.ID, TrainingDataURL: &dataURL})
	if err != nil {
		h.refuse(w, r, err)
		return
	}
	http.Redirect(w, r, projectPath(projectID, "training-jobs/", pathSegment(job.ID)), http.StatusSeeOther)
}
