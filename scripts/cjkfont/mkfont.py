#!/usr/bin/env python3
"""Make memplot's CJK font: a subset of Noto Sans CJK SC Regular (SIL OFL 1.1).

memplot draws the Chinese edition's plot titles, axes and legends with the font
this script writes, memplot/cjkfont/NotoSansCJKsc-memlab.otf, embedded in the
binary, so a machine without system CJK fonts draws no boxes. The subset holds

  * ASCII and Latin-1 (numbers, units and names in Chinese labels),
  * General Punctuation, arrows and the mathematical operators memlab prints,
  * every character of GB2312 (its 682 symbols and full-width forms, and all
    6,763 hanzi of both levels),
  * every character of the catalog lang/zh-CN/*.txt (what memlab prints),

outlines only (no hinting, no OpenType layout features: gonum/plot uses
neither). memplot's TestCJKFontCoversCatalog fails when a catalog sentence
uses a character outside the subset: run this script again and commit the
font.

Inputs, pinned so that the output is the same file byte for byte:
  pip install fonttools==4.60.1
  apt-get install fonts-noto-cjk     (Debian 12: 1:20220127+repack1-1, Noto Sans CJK 2.004)

Usage, from the repository root:
  python3 scripts/cjkfont/mkfont.py [--ttc PATH]
"""

import argparse
import glob
import hashlib
import os
import sys

TTC = "/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc"
TTC_SHA256 = "b76b0433203017ca80401b2ee0dd69350349871c4b19d504c34dbdd80541690a"
FONT_NUMBER = 2  # Noto Sans CJK SC in the collection (JP, KR, SC, TC, HK, …)
OUT = "memplot/cjkfont/NotoSansCJKsc-memlab.otf"
FONTTOOLS = "4.60.1"


def characters(root):
    chars = set(chr(c) for c in range(0x20, 0x7F))
    chars |= set(chr(c) for c in range(0xA0, 0x180))  # Latin-1, Latin Extended-A
    chars |= set(chr(c) for c in range(0x2010, 0x2060))  # General Punctuation
    chars |= set(chr(c) for c in range(0x2190, 0x2200))  # Arrows
    chars |= set(chr(c) for c in range(0x2200, 0x2300))  # Mathematical Operators
    chars |= set(chr(c) for c in range(0x3000, 0x3040))  # CJK Symbols and Punctuation
    chars |= set(chr(c) for c in range(0xFF00, 0xFFF0))  # full-width forms
    for row in range(0xA1, 0xF8):  # GB2312: symbols, full-width forms, hanzi levels 1 and 2
        for cell in range(0xA1, 0xFF):
            try:
                chars.add(bytes([row, cell]).decode("gb2312"))
            except UnicodeDecodeError:
                pass
    for path in sorted(glob.glob(os.path.join(root, "lang", "zh-CN", "*.txt"))):
        with open(path, encoding="utf-8") as f:
            chars |= set(f.read())
    return "".join(sorted(c for c in chars if c.isprintable()))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ttc", default=TTC, help="Noto Sans CJK Regular collection (default: Debian's fonts-noto-cjk)")
    args = ap.parse_args()
    try:
        import fontTools
        from fontTools import subset
    except ImportError:
        sys.exit(f"mkfont: fontTools is missing: pip install fonttools=={FONTTOOLS}")
    if fontTools.version != FONTTOOLS:
        print(f"mkfont: fontTools {fontTools.version}, not {FONTTOOLS}: the font may differ byte for byte", file=sys.stderr)
    try:
        with open(args.ttc, "rb") as f:
            digest = hashlib.sha256(f.read()).hexdigest()
    except OSError as e:
        sys.exit(f"mkfont: {e}: apt-get install fonts-noto-cjk, or name the collection with --ttc")
    if digest != TTC_SHA256:
        print(f"mkfont: {args.ttc} is not Debian 12's Noto Sans CJK 2.004 (sha256 {digest}); the font may differ", file=sys.stderr)
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    text = characters(root)
    opts = subset.Options()
    opts.font_number = FONT_NUMBER
    opts.layout_features = []
    opts.hinting = False
    opts.desubroutinize = True
    opts.name_IDs = ["*"]  # keep the copyright, licence and trademark notices
    font = subset.load_font(args.ttc, opts)
    sub = subset.Subsetter(opts)
    sub.populate(text=text)
    sub.subset(font)
    out = os.path.join(root, OUT)
    subset.save_font(font, out, opts)
    print(f"mkfont: {OUT}: {len(text)} characters, {os.path.getsize(out)} bytes")


if __name__ == "__main__":
    main()
