package kernels

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestSourcesMatchRecordedHash is CI's guard that the committed PTX was
// regenerated after the last change to a .cu or .cuh file.
func TestSourcesMatchRecordedHash(t *testing.T) {
	f, err := os.ReadFile("SOURCES.sha256")
	if err != nil {
		t.Fatal(err)
	}
	recorded := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(f))
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) != 2 {
			t.Fatalf("SOURCES.sha256: malformed line %q", sc.Text())
		}
		recorded[fields[1]] = fields[0]
	}
	var files []string
	for _, pat := range []string{"*.cu", "*.cuh", "*.ptx"} {
		m, _ := filepath.Glob(pat)
		files = append(files, m...)
	}
	if len(files) == 0 {
		t.Fatal("no kernel sources found")
	}
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(b)
		want, ok := recorded[name]
		switch {
		case !ok:
			t.Errorf("%s is not in SOURCES.sha256: run make -f Makefile.gpu ptx", name)
		case want != hex.EncodeToString(sum[:]):
			t.Errorf("%s changed since the PTX was generated: run make -f Makefile.gpu ptx", name)
		}
		delete(recorded, name)
	}
	for name := range recorded {
		t.Errorf("SOURCES.sha256 lists %s, which does not exist", name)
	}
}

func TestModulesHaveEntryPoints(t *testing.T) {
	tests := []struct {
		module  string
		entries []string
	}{
		{"elementwise", []string{"fill_strided", "fill_contig8", "random_strided", "copy_strided_same", "copy_strided_convert", "copy_contig_vec16", "transpose_4", "transpose_2", "unary_strided", "unary_contig_f32", "unary_contig_bf16", "binary_strided", "binary_contig_f32", "binary_contig_f16"}},
		{"reduce", []string{"reduce_dim", "reduce_inner", "softmax_f32", "softmax_bf16", "layernorm_f32", "layernorm_f16", "softmax_f32_vec", "layernorm_f32_vec"}},
		{"matmul", []string{"matmul_f32", "matmul_f16", "matmul_bf16", "matmul_tc_f16", "matmul_tc_bf16"}},
		{"embedding", []string{"embedding_rows", "memlab_error"}},
	}
	if got, want := len(Modules()), len(tests); got != want {
		t.Fatalf("Modules() = %v, want %d modules", Modules(), want)
	}
	for _, tt := range tests {
		t.Run(tt.module, func(t *testing.T) {
			if !slices.Contains(Modules(), tt.module) {
				t.Fatalf("Modules() = %v lacks %q", Modules(), tt.module)
			}
			p, err := PTX(tt.module)
			if err != nil {
				t.Fatal(err)
			}
			if p[len(p)-1] != 0 {
				t.Error("PTX is not NUL-terminated")
			}
			if !bytes.Contains(p, []byte(".version "+PTXVersion)) || !bytes.Contains(p, []byte(".target sm_80")) {
				t.Errorf("module %s is not PTX %s for %s", tt.module, PTXVersion, Arch)
			}
			for _, e := range tt.entries {
				if !bytes.Contains(p, []byte(" "+e+"(")) && !bytes.Contains(p, []byte(" "+e+";")) {
					t.Errorf("module %s has no symbol %s", tt.module, e)
				}
			}
		})
	}
}

func TestPTXUnknownModule(t *testing.T) {
	if _, err := PTX("nope"); err == nil || !strings.Contains(err.Error(), `kernels: no PTX module "nope"`) {
		t.Fatalf("PTX(nope) error = %v", err)
	}
}
