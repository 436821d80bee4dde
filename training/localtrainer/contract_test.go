package localtrainer

import (
	"testing"

	"github.com/weftlabs/weft/training/trainertest"
)

// The built-in trainer, on a tiny random Qwen3 with the real tokenizer and
// template, keeps training.Trainer's contract.
func TestContract(t *testing.T) {
	tr, _ := tinyTrainer(t)
	trainertest.Run(t, tr, trainertest.Fixture{BaseModel: "tiny"})
}
