# dosim: two commands get a newcomer going.
#   make run    runs the seed's example scenario and shows its timeline
#   make test   vets and runs every test under the race detector
#   make lint   runs staticcheck and dosimvet (CI runs it beside make test)
#   make fuzz   runs every fuzz target in FUZZ_TARGETS, FUZZTIME each (30s by default)
#   make workerd installs the pinned workerd for the differential test (internal/platformtest)
GO ?= go

.PHONY: run test lint vet bench fuzz cover tidy workerd

FUZZTIME ?= 30s

# Every fuzz target, as package-directory:FuzzName. make fuzz runs each in
# turn for FUZZTIME (go test -fuzz takes one target at a time) and fails
# if one is missing or fails. One end is not a failure: Go 1.26's fuzz
# coordinator can report "context deadline exceeded" as -fuzztime runs
# out while a worker is mid-input (golang/go#75804, fixed in Go 1.27); with
# no failing input written and no other failure, make fuzz says so and
# goes on. Run some with: make fuzz FUZZ_TARGETS="stub:FuzzParseOptions".
FUZZ_TARGETS ?= \
	scenario:FuzzLoadScenario \
	stub:FuzzParseOptions \
	agent:FuzzParseRetryOptions \
	agent:FuzzCron \
	agent:FuzzScheduleSpec \
	runtime:FuzzIDFromString \
	internal/clone:FuzzClone \
	explore:FuzzMergeShards \
	explore:FuzzCanonicalString \
	explore:FuzzFallbackLadder \
	object:FuzzStorageAgainstAMap \
	object:FuzzSQLExec:sqlite \
	scenario:FuzzLoadWithAUserClassAndRender \
	stub:FuzzStubFetch \
	dosimtest:FuzzCounter

# run builds the command without SQLite (build tag dosim_nosql): the demo's
# class keeps no SQL, and compiling the pure-Go SQLite (modernc.org/sqlite)
# is most of a first build. An object that opens SQL() in this build gets
# an error saying so; go install ./cmd/dosim has SQLite.
run:
	$(GO) run -tags dosim_nosql ./cmd/dosim run testdata/scenarios/ambiguous-delivery.yaml

# RACE is how make test turns the race detector on. SQLite's transpiled C
# (modernc.org/sqlite/lib) is compiled without its instrumentation
# (-race=false for that one package; libc, the driver and everything of
# dosim's stay instrumented): the C code works on memory from libc's own
# allocator, outside the Go heap the detector watches, so instrumenting it
# finds nothing and makes every SQL statement many times slower (the
# SQL-backed sweeps of explore's tests most of all). make test RACE=-race
# instruments it too. internal/buildflags repeats it (a test checks they
# agree): the tests that run the go command (go/packages' go list, go vet,
# go build) pass it on, so that they reuse this build.
RACE ?= -race -gcflags=modernc.org/sqlite/lib=-race=false

# FULL_SIZE_TESTS are explore's tests whose claim is a count of seeds
# (10,000 seeds clean, a bug missed within 10,000, a heap flat over
# 50,000): under the race detector they sweep a tenth of it (countSeeds),
# since the detector checks the code a sweep runs, not how many seeds;
# make test's second step runs them whole without it, and without SQLite
# (dosim_nosql: none of them runs SQL, and it spares compiling SQLite a
# second time). explore's TestFullSizeSweepsRunInMakeTest checks the
# pattern names every such test.
FULL_SIZE_TESTS ?= ^Test(Zoo_(DeepBugs|FuzzFindsTheFallbackLadder|DeepBugsSweptUnderTheirStrategy|FixedFormsExploreClean)|CorrectClassesPass10000Seeds|Latency_FindsAnOvertakenUpdate|PCT_FindsAStarvedCaller|Swarm_FindsWhatFixedRatesMiss|H2_SweepMemoryIsFlat)$$

# One build serves vet, lint and the tests: vet and lint compile what they
# read with the tests' flags ($(RACE); GOFLAGS for staticcheck, whose go
# list reads them), so each package, SQLite most of all, is compiled once.
# The tests' own vet pass is off (-vet=off): make vet ran it and more.
# make test does not lint: staticcheck's first run analyses every
# dependency from source (about a minute on two cores), and a first make
# test should cost what testing costs. .ci/run runs make lint beside it.
test: vet
	$(GO) test $(RACE) -vet=off -count=1 ./...
	$(GO) test -tags dosim_nosql -count=1 -run '$(FULL_SIZE_TESTS)' ./explore

vet:
	$(GO) vet $(RACE) ./...

# staticcheck is pinned in go.mod's tool directive: no separate install.
# It and dosimvet (cmd/dosimvet, package vet) are built, without the
# race flags, into a temporary folder. dosimvet runs through go vet over
# the repository's non-test code: dosim's own tests plant wall-clock
# reads, goroutines and broken stubs on purpose, to check the run-time
# checks (-objectcode.tests=false leaves them out). The examples' planted
# bugs carry //dosimvet:ok; vet's TestPlantedBugsInTheExamples checks they
# are reported without it.
lint:
	@dir=$$(mktemp -d) && trap 'rm -rf "$$dir"' EXIT && \
		$(GO) build -o "$$dir/staticcheck" honnef.co/go/tools/cmd/staticcheck && \
		echo "staticcheck ./..." && GOFLAGS="$(RACE)" "$$dir/staticcheck" ./... && \
		$(GO) build -o "$$dir/dosimvet" ./cmd/dosimvet && \
		echo "go vet -vettool=dosimvet -objectcode.tests=false ./..." && \
		$(GO) vet $(RACE) -vettool="$$dir/dosimvet" -objectcode.tests=false ./...

# The fuzz build leaves SQLite out (build tag dosim_nosql, object/sql_driver.go):
# coverage-guided fuzzing instruments every linked package, and SQLite's
# transpiled C makes each execution slower. A target that runs SQL says so
# with a third field, :sqlite, and is built with SQLite.
FUZZ_TAGS ?= dosim_nosql

fuzz:
	@set -e; for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; rest=$${t#*:}; name=$${rest%%:*}; tags="$(FUZZ_TAGS)"; \
		if [ "$$rest" != "$$name" ]; then tags=""; fi; \
		if ! $(GO) test -tags "$$tags" -list "^$$name\$$" ./$$pkg | grep -qx "$$name"; then \
			echo "make fuzz: no fuzz target $$name in ./$$pkg" >&2; exit 1; \
		fi; \
		echo "== fuzz ./$$pkg $$name for $(FUZZTIME)"; \
		log=$$(mktemp); \
		if $(GO) test -tags "$$tags" -run '^$$' -fuzz "^$$name\$$" -fuzztime $(FUZZTIME) ./$$pkg >$$log 2>&1; then \
			cat $$log; \
		else \
			cat $$log; \
			if grep -q 'Failing input written to' $$log || ! grep -q '^    context deadline exceeded$$' $$log || \
				[ "$$(grep -c -e '--- FAIL' $$log)" != 1 ]; then rm -f $$log; exit 1; fi; \
			echo "make fuzz: $$name: go's fuzz coordinator ended with 'context deadline exceeded' and no failing input (golang/go#75804, fixed in Go 1.27): not a failure of the target"; \
		fi; \
		rm -f $$log; \
	done

# bench runs every benchmark, then the ones issue 14's targets read, three
# times (the 10^7-call one once), and prints each target with its median
# figure and verdict, the peer ratios first (the peer is the hand-written
# testing/synctest simulation, BenchmarkPeerSynctest). BenchmarkTimeToFind
# runs again, once per strategy and zoo bug, for its table: seeds and CPU
# time to the first failure (the README's "Finding bugs").
bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...
	$(GO) test ./explore -run '^$$' -bench 'TimeToFind' -benchtime 1x
	{ $(GO) test ./runtime -run '^$$' -bench 'CallNoFault$$|CallAmbiguous$$|PeerSynctest|RecordRetained|GroupCalls' -benchmem -count 3 && \
	  $(GO) test ./runtime -run '^$$' -bench 'CallsKeepLast' -benchtime 10000000x && \
	  $(GO) test ./explore -run '^$$' -bench 'ExploreSeed|SweepRetainedHeap' -benchmem -count 3; } | $(GO) run ./internal/benchratio

cover:
	$(GO) test -count=1 -coverprofile=cover.out ./... && $(GO) tool cover -func=cover.out | tail -1

tidy:
	$(GO) mod tidy

# workerd installs, with npm, the workerd version pinned in
# internal/platformtest/testdata/workerd into the user cache, where the
# differential test (internal/platformtest TestAgainstWorkerd) finds it.
workerd:
	scripts/workerd-install.sh
