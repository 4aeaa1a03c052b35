// Package groundtruth checks the reference solutions of the allocator exercises
// (04 to 10) against allocation traces recorded from PyTorch 2.11 on an H200: for
// every op of every recorded trace, the solutions must reproduce PyTorch's
// rounding, pool, segment size, best-fit choice, split, merge, statistics and
// non-releasable bytes. Its tests build only with the solution tag:
//
//	cd exercises && go test -tags solution ./internal/groundtruth/
//
// They read ../shared/reference/torch-2.11 next to the repository and skip when
// it is missing.
package groundtruth
