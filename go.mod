module memlab.dev/memlab

go 1.26
