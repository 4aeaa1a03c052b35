package explore

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"sort"
)

// smallPNG re-encodes a plot's PNG with a palette of its 256 most frequent
// colours (every other colour, the anti-aliased edges of text and lines, takes
// its nearest): a quarter of the bytes, which matters for a view that carries
// dozens of frames in the notebook.
func smallPNG(raw []byte) ([]byte, error) {
	img, err := png.Decode(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("explore: re-encoding a frame: %w", err)
	}
	rgba, ok := img.(*image.RGBA)
	if !ok {
		return raw, nil
	}
	count := map[uint32]int{}
	pix := rgba.Pix
	for i := 0; i+3 < len(pix); i += 4 {
		count[uint32(pix[i])<<24|uint32(pix[i+1])<<16|uint32(pix[i+2])<<8|uint32(pix[i+3])]++
	}
	keys := make([]uint32, 0, len(count))
	for k := range count {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if count[keys[i]] != count[keys[j]] {
			return count[keys[i]] > count[keys[j]]
		}
		return keys[i] < keys[j]
	})
	n := min(len(keys), 256)
	pal := make(color.Palette, n)
	for i := range pal {
		k := keys[i]
		pal[i] = color.RGBA{R: uint8(k >> 24), G: uint8(k >> 16), B: uint8(k >> 8), A: uint8(k)}
	}
	index := make(map[uint32]uint8, len(keys))
	for i, k := range keys {
		if i < n {
			index[k] = uint8(i)
			continue
		}
		index[k] = uint8(pal.Index(color.RGBA{R: uint8(k >> 24), G: uint8(k >> 16), B: uint8(k >> 8), A: uint8(k)}))
	}
	p := image.NewPaletted(rgba.Bounds(), pal)
	for i, j := 0, 0; i+3 < len(pix); i, j = i+4, j+1 {
		p.Pix[j] = index[uint32(pix[i])<<24|uint32(pix[i+1])<<16|uint32(pix[i+2])<<8|uint32(pix[i+3])]
	}
	var b bytes.Buffer
	if err := (&png.Encoder{CompressionLevel: png.DefaultCompression}).Encode(&b, p); err != nil {
		return nil, fmt.Errorf("explore: re-encoding a frame: %w", err)
	}
	return b.Bytes(), nil
}
