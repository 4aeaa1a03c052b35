package memlab

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"memlab.dev/memlab/allocator"
	"memlab.dev/memlab/lang"
	"memlab.dev/memlab/tensor"
)

func TestErrorText(t *testing.T) {
	pytorch := fmt.Errorf("cell: %w", &tensor.Error{Op: "view", Msg: "view size is not compatible with input tensor's size and stride"})
	fraction := fmt.Errorf("%w 1.5: allowed range is 0~1", allocator.ErrInvalidFraction)
	other := errors.New("memlab: something the catalog does not know")

	t.Setenv("MEMLAB_LANG", "en")
	for _, err := range []error{pytorch, fraction, other} {
		if got := ErrorText(err); got != err.Error() {
			t.Errorf("English: ErrorText(%q) = %q", err, got)
		}
	}
	if got := PyTorchText("msg"); got != "msg" {
		t.Errorf("English: PyTorchText = %q", got)
	}

	t.Setenv("MEMLAB_LANG", "zh-CN")
	if got, want := ErrorText(pytorch), PyTorchMarker+"view size is not compatible with input tensor's size and stride"; got != want {
		t.Errorf("a PyTorch error: %q, want %q (memlab's wrapping left out)", got, want)
	}
	if got, want := ErrorText(fraction), lang.TextIn(lang.Chinese, allocator.ErrInvalidFraction.Error()); got != want || strings.Contains(got, "invalid") {
		t.Errorf("a sentinel the catalog translates: %q, want %q", got, want)
	}
	if got := ErrorText(other); got != other.Error() {
		t.Errorf("an error the catalog does not know: %q", got)
	}
	if got := ErrorText(nil); got != "<nil>" {
		t.Errorf("nil: %q", got)
	}
	if got := fmt.Sprint(Labels(lang.Chinese, []any{fraction})...); got != ErrorText(fraction) {
		t.Errorf("Labels prints an error as %q, want ErrorText's", got)
	}
}
