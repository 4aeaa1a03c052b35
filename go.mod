module memlab.dev/memlab

go 1.26

require (
	github.com/ebitengine/purego v0.11.3 // indirect
	github.com/google/uuid v1.1.1 // indirect
	github.com/pkg/errors v0.9.1 // indirect
	gorgonia.org/cu v0.9.6 // indirect
)
