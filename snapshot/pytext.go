package snapshot

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"unicode/utf8"
)

// This file reads the text arguments of protocol 0's opcodes and the strings of
// every protocol exactly as CPython's _pickle.c does, so that the decoder and
// Python's pickle read the same pickles the same way (diff_test.go checks it).

// cstr is what C sees of a line: the bytes up to the first NUL.
func cstr(b []byte) string {
	if i := strings.IndexByte(string(b), 0); i >= 0 {
		return string(b[:i])
	}
	return string(b)
}

// pyIsSpace is C's isspace in the C locale (Py_ISSPACE).
func pyIsSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

// maxStrDigits is CPython's limit on the digits of a decimal integer string
// (sys.int_info.default_max_str_digits).
const maxStrDigits = 4300

// pyLong parses s as CPython's PyLong_FromString(s, NULL, base) does, for base 0
// (a Python literal: 0x, 0o and 0b prefixes, no leading zeros) or 10: blanks
// around it, a sign, single underscores between digits.
func pyLong(s string, base int) (*big.Int, error) {
	bad := fmt.Errorf("%.40q is not an integer", s)
	i, neg := blanksAndSign(s)
	zerosOnly := false
	if base == 0 {
		switch {
		case i < len(s) && s[i] != '0':
			base = 10
		case i+1 < len(s) && (s[i+1] == 'x' || s[i+1] == 'X'):
			base = 16
		case i+1 < len(s) && (s[i+1] == 'o' || s[i+1] == 'O'):
			base = 8
		case i+1 < len(s) && (s[i+1] == 'b' || s[i+1] == 'B'):
			base = 2
		default:
			base, zerosOnly = 10, true
		}
		if base != 10 {
			i += 2
			if i < len(s) && s[i] == '_' {
				i++
			}
		}
	}
	var digits strings.Builder
	prevUnderscore := true // no leading underscore
	for ; i < len(s); i++ {
		c := s[i]
		if c == '_' {
			if prevUnderscore {
				return nil, bad
			}
			prevUnderscore = true
			continue
		}
		if d := digitVal(c); d >= base {
			break
		}
		digits.WriteByte(c)
		prevUnderscore = false
	}
	if digits.Len() == 0 || prevUnderscore {
		return nil, bad
	}
	for i < len(s) && pyIsSpace(s[i]) {
		i++
	}
	if i != len(s) {
		return nil, bad
	}
	if base == 10 && digits.Len() > maxStrDigits {
		return nil, fmt.Errorf("integer of %d digits is too long: memlab reads integers of at most %d digits, as Python does", digits.Len(), maxStrDigits)
	}
	if digits.Len() > maxIntDigits {
		return nil, fmt.Errorf("integer of %d digits is too long: memlab reads integers of at most %d digits", digits.Len(), maxIntDigits)
	}
	v, ok := new(big.Int).SetString(digits.String(), base)
	if !ok {
		return nil, bad
	}
	if zerosOnly && v.Sign() != 0 {
		return nil, bad // an old octal literal (010)
	}
	if neg {
		v.Neg(v)
	}
	return v, nil
}

// digitVal is the value of an ASCII digit or letter (36 for anything else).
func digitVal(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'z':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'Z':
		return int(c-'A') + 10
	}
	return 36
}

// cStrtol is C's strtol(s, &end, 0) that must consume all of s: blanks, a sign, a
// 0x prefix or a leading 0 (octal); ok is false when it does not, or overflows.
func cStrtol(s string) (int64, bool) {
	i, neg := blanksAndSign(s)
	base := 10
	switch {
	case i+2 < len(s) && s[i] == '0' && (s[i+1] == 'x' || s[i+1] == 'X') && digitVal(s[i+2]) < 16:
		base = 16
		i += 2
	case i < len(s) && s[i] == '0':
		base = 8
	}
	start := i
	var u uint64
	for ; i < len(s) && digitVal(s[i]) < base; i++ {
		u = u*uint64(base) + uint64(digitVal(s[i]))
		if u > 1<<63 {
			return 0, false
		}
	}
	if i == start || i != len(s) || (!neg && u > math.MaxInt64) {
		return 0, false
	}
	if neg {
		return -int64(u), true
	}
	return int64(u), true
}

// textInt handles protocol 0's INT and LONG as CPython does: INT is C's strtol
// (base 0: 010 is 8), "I00" and "I01" (any two characters strtol reads as 0 or 1)
// are False and True, and what strtol cannot read is read as a Python literal;
// LONG drops a trailing L and reads a Python literal.
func (d *decoder) textInt(line []byte) error {
	if len(line) == 0 {
		return d.fail("empty argument (truncated)")
	}
	if d.code == opLong && line[len(line)-1] == 'L' {
		line = line[:len(line)-1]
	}
	s := cstr(line)
	if d.code == opInt {
		if x, ok := cStrtol(s); ok {
			if len(line) == 2 && (x == 0 || x == 1) {
				d.push(value{n: uint32(x), k: kBool})
				return nil
			}
			d.pushInt(x)
			return nil
		}
	}
	v, err := pyLong(s, 0)
	if err != nil {
		return d.fail("%v", err)
	}
	d.pushBig(v)
	return nil
}

// textIndex reads the memo index of PUT and GET (a decimal integer, as CPython's
// PyLong_FromString(s, NULL, 10) reads it).
func (d *decoder) textIndex() (uint64, error) {
	b, err := d.line()
	if err != nil {
		return 0, err
	}
	if len(b) == 0 {
		return 0, d.fail("empty memo index (truncated)")
	}
	v, perr := pyLong(cstr(b), 10)
	switch {
	case perr != nil:
		return 0, d.fail("memo index %.40q is not a number", b)
	case v.Sign() < 0:
		return 0, d.fail("negative memo index %s", v)
	case !v.IsInt64():
		return 0, d.fail("memo index %s is too large", shortInt(v))
	}
	return v.Uint64(), nil
}

// textFloat reads FLOAT's argument as CPython's PyOS_string_to_double: a decimal
// float (no blanks, underscores or hexadecimal), inf, infinity or nan with a sign,
// and nothing after it; overflow is an error, underflow gives 0.
func textFloat(line []byte) (float64, error) {
	s := cstr(line)
	bad := fmt.Errorf("%.40q is not a float", s)
	t := strings.TrimLeft(s, "+-")
	if len(s)-len(t) > 1 {
		return 0, bad
	}
	switch strings.ToLower(t) {
	case "inf", "infinity":
		return strconv.ParseFloat(s, 64)
	case "nan":
		return math.NaN(), nil
	}
	i, digits := 0, 0
	for i < len(t) && t[i] >= '0' && t[i] <= '9' {
		i, digits = i+1, digits+1
	}
	if i < len(t) && t[i] == '.' {
		i++
		for i < len(t) && t[i] >= '0' && t[i] <= '9' {
			i, digits = i+1, digits+1
		}
	}
	if digits == 0 {
		return 0, bad
	}
	if i < len(t) && (t[i] == 'e' || t[i] == 'E') {
		j := i + 1
		if j < len(t) && (t[j] == '+' || t[j] == '-') {
			j++
		}
		k := j
		for k < len(t) && t[k] >= '0' && t[k] <= '9' {
			k++
		}
		if k > j {
			i = k
		}
	}
	if i != len(t) {
		return 0, bad
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil && !math.IsInf(f, 0) {
		var ne *strconv.NumError
		if errors.As(err, &ne) && ne.Err == strconv.ErrRange {
			return f, nil // underflow
		}
		return 0, bad
	}
	if math.IsInf(f, 0) {
		return 0, fmt.Errorf("%.40q is too large for a float", s)
	}
	return f, nil
}

// pyUTF8 checks b as Python's UTF-8 decoder with "surrogatepass" does (which
// BINUNICODE's strings go through): UTF-8, where encoded surrogates are allowed.
// It returns the offset of the first bad byte, or -1.
func pyUTF8(b []byte) int {
	if utf8.Valid(b) {
		return -1
	}
	for i := 0; i < len(b); {
		if b[i] < utf8.RuneSelf {
			i++
			continue
		}
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n == 1 {
			if i+2 < len(b) && b[i] == 0xED && b[i+1] >= 0xA0 && b[i+1] <= 0xBF && b[i+2] >= 0x80 && b[i+2] <= 0xBF {
				i += 3 // a surrogate
				continue
			}
			return i
		}
		i += n
	}
	return -1
}

// appendWTF8 appends the code point r in UTF-8, surrogates included (as Python's
// "surrogatepass" encodes them), so that a lone surrogate reads back as itself.
func appendWTF8(b []byte, r rune) []byte {
	if r >= 0xD800 && r <= 0xDFFF {
		return append(b, 0xED, byte(0xA0|(r>>6)&0x1F), byte(0x80|r&0x3F))
	}
	return utf8.AppendRune(b, r)
}

// asciiStr checks a Python 2 str (STRING, BINSTRING, SHORT_BINSTRING): Python 3
// reads them with the ASCII codec.
func asciiStr(b []byte) error {
	for i, c := range b {
		if c >= 0x80 {
			return fmt.Errorf("Python 2 string holds the byte %#02x at %d: Python 3 reads these strings as ASCII", c, i)
		}
	}
	return nil
}

// unquotePy decodes protocol 0's STRING argument as CPython does: quoted (in ' or
// "), with the escapes of a bytes literal (PyBytes_DecodeEscape; unknown escapes
// stay as they are), and ASCII.
func unquotePy(b []byte) (string, error) {
	s := string(b)
	if len(s) < 2 || (s[0] != '\'' && s[0] != '"') || s[len(s)-1] != s[0] {
		return "", fmt.Errorf("STRING argument %.40q is not quoted", s)
	}
	s = s[1 : len(s)-1]
	var out []byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' {
			out = append(out, c)
			continue
		}
		i++
		if i == len(s) {
			return "", errors.New("STRING argument ends in a lone backslash")
		}
		switch e := s[i]; e {
		case 'n':
			out = append(out, '\n')
		case 't':
			out = append(out, '\t')
		case 'r':
			out = append(out, '\r')
		case 'a':
			out = append(out, '\a')
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'v':
			out = append(out, '\v')
		case '\\', '\'', '"':
			out = append(out, e)
		case '\n':
		case 'x':
			if i+2 >= len(s) || digitVal(s[i+1]) >= 16 || digitVal(s[i+2]) >= 16 {
				return "", fmt.Errorf("STRING argument has a bad \\x escape at %d", i-1)
			}
			out = append(out, byte(digitVal(s[i+1])<<4|digitVal(s[i+2])))
			i += 2
		case '0', '1', '2', '3', '4', '5', '6', '7':
			v, j := 0, i
			for j < len(s) && j < i+3 && s[j] >= '0' && s[j] <= '7' {
				v = v*8 + int(s[j]-'0')
				j++
			}
			out = append(out, byte(v))
			i = j - 1
		default:
			out = append(out, '\\', e)
		}
	}
	if err := asciiStr(out); err != nil {
		return "", err
	}
	return string(out), nil
}

// rawUnicodeEscape decodes protocol 0's UNICODE argument as Python's
// raw-unicode-escape codec: latin-1 bytes, where \uXXXX and \UXXXXXXXX after an
// odd number of backslashes are code points (a short or out-of-range one is an
// error).
func rawUnicodeEscape(b []byte) (string, error) {
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); {
		if b[i] != '\\' {
			out = utf8.AppendRune(out, rune(b[i]))
			i++
			continue
		}
		j := i
		for j < len(b) && b[j] == '\\' {
			j++
		}
		run := j - i
		if run%2 == 0 || j == len(b) || (b[j] != 'u' && b[j] != 'U') {
			out = append(out, b[i:j]...)
			i = j
			continue
		}
		out = append(out, b[i:j-1]...)
		n := 4
		if b[j] == 'U' {
			n = 8
		}
		var r uint32
		k := j + 1
		for ; k < len(b) && k < j+1+n && digitVal(b[k]) < 16; k++ {
			r = r<<4 | uint32(digitVal(b[k]))
		}
		if k != j+1+n {
			return "", fmt.Errorf("UNICODE argument has a truncated \\%c escape at %d", b[j], j-1)
		}
		if r > utf8.MaxRune {
			return "", fmt.Errorf("UNICODE argument has an escape \\U%08x beyond U+10FFFF", r)
		}
		out = appendWTF8(out, rune(r))
		i = k
	}
	return string(out), nil
}

// blanksAndSign skips the blanks and the one sign that may open a number as
// Python and C read it: it returns the index after them and whether the sign
// was a minus.
func blanksAndSign(s string) (int, bool) {
	i := 0
	for i < len(s) && pyIsSpace(s[i]) {
		i++
	}
	neg := false
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		i++
	}
	return i, neg
}
