package exectrainer_test

import (
	"testing"
	"time"

	"github.com/weftlabs/weft/internal/gobuild"
	"github.com/weftlabs/weft/training/exectrainer"
	"github.com/weftlabs/weft/training/trainertest"
)

// The exec trainer, running the stand-in GPU trainer of internal/testtrainer,
// keeps training.Trainer's contract.
func TestContract(t *testing.T) {
	trainer, err := exectrainer.New(exectrainer.Config{Command: []string{gobuild.Binary(t, "./internal/testtrainer")}, KillGrace: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	trainertest.Run(t, trainer, trainertest.Fixture{BaseModel: "Qwen/Qwen3-0.6B"})
}
