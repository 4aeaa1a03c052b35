module memlab.dev/memlab/exercises

go 1.22
