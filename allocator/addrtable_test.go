package allocator

import (
	"math/rand"
	"testing"
)

// TestAddrTable checks the table against a Go map through random puts and deletes,
// with clustered keys so probe runs and backward shifts are exercised.
func TestAddrTable(t *testing.T) {
	var tab addrTable
	ref := map[uint64]*block{}
	rng := rand.New(rand.NewSource(3))
	blocks := make([]block, 5000)
	for i := 0; i < 200000; i++ {
		k := uint64(rng.Intn(5000)+1) * 512
		switch rng.Intn(3) {
		case 0, 1:
			b := &blocks[k/512-1]
			tab.put(k, b)
			ref[k] = b
		case 2:
			got := tab.del(k)
			if got != ref[k] {
				t.Fatalf("del(%#x) = %p, want %p", k, got, ref[k])
			}
			delete(ref, k)
		}
		if i%1000 == 0 {
			if tab.len() != len(ref) {
				t.Fatalf("len %d, want %d", tab.len(), len(ref))
			}
			for k, v := range ref {
				if tab.get(k) != v {
					t.Fatalf("get(%#x) wrong after %d ops", k, i)
				}
			}
			n := 0
			tab.each(func(*block) { n++ })
			if n != len(ref) {
				t.Fatalf("each visits %d, want %d", n, len(ref))
			}
		}
	}
	if tab.get(0) != nil || tab.del(0) != nil || tab.get(12345*512+7) != nil {
		t.Fatal("absent keys found")
	}
}
