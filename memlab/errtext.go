package memlab

import (
	"errors"
	"fmt"

	"memlab.dev/memlab/lang"
	"memlab.dev/memlab/tensor"
)

// PyTorchMarker opens, in the Chinese edition, the Chinese rendering of a
// message PyTorch itself raises: what follows is PyTorch's message as the
// catalog translates it, so that the reader sees whose words these are.
const PyTorchMarker = "PyTorch 报错（译文）："

// PyTorchVerbatim opens, in the Chinese edition, a message PyTorch raises
// that the catalog has no translation for: it follows in PyTorch's English,
// word for word.
const PyTorchVerbatim = "PyTorch 报错（原文）："

// PyTorchText is te's message, a message PyTorch raises word for word, as
// the workbook's edition shows it: in English as it is; in Chinese in the
// catalog's translation after [PyTorchMarker], or where the catalog lacks it
// in English after [PyTorchVerbatim].
func PyTorchText(te *tensor.Error) string { return pytorchTextIn(lang.Current(), te) }

func pytorchTextIn(edition string, te *tensor.Error) string {
	if edition == lang.English {
		return te.Msg
	}
	if te.Format != "" && lang.Has(edition, te.Format) {
		return PyTorchMarker + fmt.Sprintf(lang.TextIn(edition, te.Format), te.Args...)
	}
	lang.TextIn(edition, te.Msg) // a miss that a notebook's test (lang.OnMiss) sees
	return PyTorchVerbatim + te.Msg
}

// ErrorText is err as the workbook's edition prints it, the one rule for
// errors a cell shows. In English, err's own text. In Chinese: an error
// PyTorch would raise (a [tensor.Error] in err's chain) as PyTorch's message
// in the catalog's translation after [PyTorchMarker] (or, where the catalog
// lacks it, in English after [PyTorchVerbatim]), memlab's wrapping ("tensor:
// view: ") left out; any other error as the catalog's translation of the
// outermost error in its chain that lang/zh-CN/*.txt translates (a sentinel
// such as pool.ErrExhausted, whose Chinese says what the wrapping and details
// said); an error the catalog does not know as it is. The Go error values stay
// English for Go callers. Labels (Measured, Judge, a table's cells) print
// error arguments with it.
func ErrorText(err error) string { return errorTextIn(lang.Current(), err) }

func errorTextIn(edition string, err error) string {
	if err == nil {
		return "<nil>"
	}
	if edition == lang.English {
		return err.Error()
	}
	var te *tensor.Error
	if errors.As(err, &te) {
		return pytorchTextIn(edition, te)
	}
	for e := err; e != nil; e = errors.Unwrap(e) {
		if lang.Has(edition, e.Error()) {
			return lang.TextIn(edition, e.Error())
		}
	}
	return err.Error()
}
