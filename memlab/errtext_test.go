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
	const viewFormat = "view size is not compatible with input tensor's size and stride (at least one dimension spans across two contiguous subspaces). Use .reshape(...) instead."
	translated := &tensor.Error{Op: "view", Msg: viewFormat, Format: viewFormat}
	pytorch := fmt.Errorf("cell: %w", translated)
	untranslated := &tensor.Error{Op: "view", Msg: "a message the catalog lacks", Format: "a message the catalog lacks"}
	fraction := fmt.Errorf("%w 1.5: allowed range is 0~1", allocator.ErrInvalidFraction)
	other := errors.New("memlab: something the catalog does not know")

	t.Setenv("MEMLAB_LANG", "en")
	for _, err := range []error{pytorch, fraction, other} {
		if got := ErrorText(err); got != err.Error() {
			t.Errorf("English: ErrorText(%q) = %q", err, got)
		}
	}
	if got := PyTorchText(translated); got != viewFormat {
		t.Errorf("English: PyTorchText = %q, want PyTorch's words", got)
	}

	t.Setenv("MEMLAB_LANG", "zh-CN")
	if got, want := ErrorText(pytorch), PyTorchMarker+lang.TextIn(lang.Chinese, viewFormat); got != want || strings.Contains(got, "compatible") {
		t.Errorf("a PyTorch error: %q, want %q (the catalog's translation, memlab's wrapping left out)", got, want)
	}
	if got, want := ErrorText(untranslated), PyTorchVerbatim+untranslated.Msg; got != want {
		t.Errorf("a PyTorch error the catalog lacks: %q, want %q", got, want)
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

// TestPyTorchErrorsTranslated checks, on the errors package tensor raises,
// that the catalog translates them with their arguments in place: the
// in-place error's version numbers and grad_fn land in the Chinese sentence.
func TestPyTorchErrorsTranslated(t *testing.T) {
	t.Setenv("MEMLAB_LANG", "zh-CN")
	l := MustOpen(Sim("1 GiB"))
	defer l.Close()
	x := Must(tensor.Zeros(l, tensor.Float32, 4, 4))
	xt := Must(x.T())
	_, err := xt.View(16)
	var te *tensor.Error
	if !errors.As(err, &te) {
		t.Fatalf("view of a transpose: %v, want a tensor.Error", err)
	}
	if got := ErrorText(err); !strings.HasPrefix(got, PyTorchMarker) || strings.Contains(got, "compatible") {
		t.Errorf("the view error prints %q, want the catalog's translation", got)
	}

	tape := tensor.NewTape()
	Check(tape.Watch(x))
	y := Must(x.Exp())
	Check(y.Scale_(2))
	err = tape.Backward()
	if !errors.As(err, &te) {
		t.Fatalf("backward after an in-place change: %v, want a tensor.Error", err)
	}
	got := ErrorText(err)
	for _, want := range []string{PyTorchMarker, "ExpBackward0 的第 0 个输出", "版本号是 1，应为 0", "torch.cuda.FloatTensor [4, 4]"} {
		if !strings.Contains(got, want) {
			t.Errorf("the in-place error prints %q, which lacks %q", got, want)
		}
	}
	Check(tensor.ReleaseLive(y, xt, x))
	Check(tape.Release())
}
