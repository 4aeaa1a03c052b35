package memlab

import (
	"errors"

	"memlab.dev/memlab/lang"
	"memlab.dev/memlab/tensor"
)

// PyTorchMarker opens, in the Chinese edition, a message PyTorch itself
// prints (PyTorchText): the message follows in PyTorch's English, as the
// learner will meet it.
const PyTorchMarker = "报错（PyTorch 原文）："

// PyTorchText is msg, a message PyTorch prints word for word (a
// [tensor.Error]'s Msg), as the workbook's edition shows it: as it is in
// English; in Chinese after [PyTorchMarker], so that the reader sees it is
// PyTorch's own text.
func PyTorchText(msg string) string { return pytorchTextIn(lang.Current(), msg) }

func pytorchTextIn(edition, msg string) string {
	if edition == lang.Chinese {
		return PyTorchMarker + msg
	}
	return msg
}

// ErrorText is err as the workbook's edition prints it, the one rule for
// errors a cell shows. In English, err's own text. In Chinese: an error
// PyTorch would raise (a [tensor.Error] in err's chain) as [PyTorchText] of
// PyTorch's message, memlab's wrapping ("tensor: view: ") left out; any other
// error as the catalog's translation of the outermost error in its chain
// that lang/zh-CN/*.txt translates (a sentinel such as pool.ErrExhausted,
// whose Chinese says what the wrapping and details said); an error the
// catalog does not know as it is. The Go error values stay English for Go
// callers. Labels (Measured, Judge, a table's cells) print error arguments
// with it.
func ErrorText(err error) string { return errorTextIn(lang.Current(), err) }

func errorTextIn(edition string, err error) string {
	if err == nil {
		return "<nil>"
	}
	if edition != lang.Chinese {
		return err.Error()
	}
	var te *tensor.Error
	if errors.As(err, &te) {
		return pytorchTextIn(edition, te.Msg)
	}
	for e := err; e != nil; e = errors.Unwrap(e) {
		if lang.Has(lang.Chinese, e.Error()) {
			return lang.TextIn(lang.Chinese, e.Error())
		}
	}
	return err.Error()
}
