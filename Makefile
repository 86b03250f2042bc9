# dosim: two commands get a newcomer going.
#   make run    runs the demo scenario
#   make test   vets, lints and runs every test under the race detector
GO ?= go

.PHONY: run test lint vet bench fuzz cover tidy

run:
	$(GO) run ./cmd/dosim demo

test: vet lint
	$(GO) test -race -count=1 ./...

vet:
	$(GO) vet ./...

# staticcheck is pinned in go.mod's tool directive: no separate install.
lint:
	$(GO) tool staticcheck ./...

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

cover:
	$(GO) test -count=1 -coverprofile=cover.out ./... && $(GO) tool cover -func=cover.out | tail -1

tidy:
	$(GO) mod tidy
