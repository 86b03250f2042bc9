# dosim: two commands get a newcomer going.
#   make run    runs the seed's example scenario and shows its timeline
#   make test   vets, lints and runs every test under the race detector
#   make fuzz   fuzzes the scenario loader (FUZZTIME=30s by default)
GO ?= go

.PHONY: run test lint vet bench fuzz cover tidy

FUZZTIME ?= 30s

run:
	$(GO) run ./cmd/dosim run testdata/scenarios/ambiguous-delivery.yaml

test: vet lint
	$(GO) test -race -count=1 ./...

vet:
	$(GO) vet ./...

# staticcheck is pinned in go.mod's tool directive: no separate install.
lint:
	$(GO) tool staticcheck ./...

fuzz:
	$(GO) test -run '^$$' -fuzz FuzzLoadScenario -fuzztime $(FUZZTIME) ./scenario

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

cover:
	$(GO) test -count=1 -coverprofile=cover.out ./... && $(GO) tool cover -func=cover.out | tail -1

tidy:
	$(GO) mod tidy
