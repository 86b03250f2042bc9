# dosim: two commands get a newcomer going.
#   make run    runs the seed's example scenario and shows its timeline
#   make test   runs every test, under the race detector but for those
#               that run only the Go toolchain or a sweep's full size
#   make lint   runs go vet, staticcheck and dosimvet (CI runs it too)
#   make fuzz   runs every fuzz target in FUZZ_TARGETS, FUZZTIME each (30s by default)
#   make workerd installs the pinned workerd for the differential test (internal/platformtest)
GO ?= go

.PHONY: run test test-race test-plain lint vet bench fuzz cover tidy workerd

FUZZTIME ?= 30s
# FUZZMINIMIZE bounds how long the fuzzer minimises each new input: by
# default a minute, which a target of large inputs (FuzzMergeShards: two
# shard files) spent on every input it found, 20 executions in 50 s; at
# 100 executions it runs some 9,000 a second.
FUZZMINIMIZE ?= 100x

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
	examples/wallet:FuzzWallet \
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
# (modernc.org/sqlite/lib), the C library it runs on (modernc.org/libc)
# and that library's allocator (modernc.org/memory) are compiled without
# the detector's instrumentation (-race=false for those packages; the
# driver, modernc.org/sqlite, and everything of dosim's stay
# instrumented). That C code works on memory from its own allocator,
# outside the Go heap, and its locks are its own: instrumenting it finds
# nothing of dosim's, and its checks (the detector's and checkptr's, which
# -race turns on) make every SQL statement several times slower: the
# SQL-backed sweeps of explore's tests ran 10.6 s instrumented, 6.6 s not.
# A connection passes between dosim's goroutines only through dosim's
# scheduler, whose handoffs the detector sees. make test RACE=-race
# instruments it all.
# internal/buildflags repeats it (a test checks they agree): the tests
# that run the go command (go/packages' go list, go vet, go build) pass
# it on, so that they reuse this build.
RACE ?= -race -gcflags=modernc.org/sqlite/lib=-race=false -gcflags=modernc.org/libc/...=-race=false -gcflags=modernc.org/memory=-race=false

# FULL_SIZE_TESTS are explore's tests whose claim is a size (10,000 seeds
# clean, a bug missed within 10,000, a heap flat over 50,000, a queue
# reported after 240 hours): under the race detector they sweep a tenth
# of it (countSeeds) or skip, since the detector checks the code a sweep
# runs, not how many seeds, and other tests run that code under it;
# make test's second step runs them whole without it, and without SQLite
# (dosim_nosql: it spares compiling SQLite a second time; the few cases
# of theirs whose classes keep SQL skip there, saying so, and run a tenth
# of their size in the race step). explore's
# TestFullSizeSweepsRunInMakeTest checks the pattern names every such
# test.
FULL_SIZE_TESTS ?= ^Test(Zoo_(DefaultStrategyFindsEveryBug|DeepBugs|FuzzFindsTheFallbackLadder|DeepBugsSweptUnderTheirStrategy|FixedFormsExploreClean)|C2_OrdinaryCode(ExploresClean|sTwinsAreFound)|D1_ASweepsSummaryDoesNotDependOnItsWorkers|D1_ASeedsVerdictDoesNotDependOnTheSeedsBeforeIt|C8_AQueueIsReportedAtTheHorizon|CorrectClassesPass10000Seeds|Latency_FindsAnOvertakenUpdate|PCT_FindsAStarvedCaller|Swarm_FindsWhatFixedRatesMiss|H2_SweepMemoryIsFlat|H2_ShrinkManyCallsInBoundedReplays)$$

# TOOL_PACKAGES are tools over Go source: the analyzers (vet,
# cmd/dosimvet) and the typed-stub generator (internal/stubgen,
# cmd/dosim-gen). TOOL_TESTS are their tests, and the tests elsewhere
# that run the Go toolchain on a module of their own (examples/wallet's
# README install steps). Their work is go/types' and the go command's,
# with no goroutines of dosim's, so the race detector has nothing to
# check in them, while under it they compile go/types and
# golang.org/x/tools a second time and each child build links SQLite and
# the race runtime into every binary it makes. make test runs them in its
# second step, without it and without SQLite (internal/buildflags passes
# the tag on to the child builds), and its race step leaves them out.
# internal/buildflags' TestToolTestsRunInMakeTest checks that every test
# runs in one step or the other.
TOOL_PACKAGES ?= ./vet ./cmd/dosimvet ./internal/stubgen ./cmd/dosim-gen
TOOL_TESTS ?= ^Test(ReadmeInstallSteps|GoVetOnAUserModule|PlantedBugsInTheExamples|Analyzers|TypedStub[A-Za-z]*|GeneratedStubs[A-Za-z]*|DosimGen[A-Za-z]*)$$

# LONGEST_FIRST are the packages whose tests take longest under the race
# detector, longest first. go test starts packages in the order it is
# given them, two at a time on two cores; ./... alone would start them
# late, with one core idle behind the last. Naming them first is all it
# does: ./... still tests each package once.
LONGEST_FIRST ?= ./explore ./render ./cli ./runtime ./internal/platformtest

# The packages make test's race step tests: LONGEST_FIRST, then the rest
# but TOOL_PACKAGES.
race_packages = $(GO) list $(LONGEST_FIRST) ./... | grep -vxF $(TOOL_PACKAGES:./%=-e github.com/dosim/dosim/%)

# make test links its test binaries without DWARF debug information
# (-ldflags=-w): nothing in a test run reads it (stack traces, goleak and
# profiles use the symbol table, which stays), and leaving it out saves a
# fifth of each of some 40 links (cli.test: 1.4 s of CPU to 1.1 s).
TEST_LDFLAGS ?= -w

# make test runs the go command, the compiler and the test binaries with
# a garbage collector that lets the heap grow to five times what survived
# the last collection (GOGC=400, Go's default is 100): under the race
# detector every collection also walks its shadow state, and fewer of
# them spend some 13% less CPU on explore's sweeps (24.3 s to 21.2 s for
# five of them, alternating runs), for more memory (a first make test's
# peak went from 0.8 GB to 1.3 GB). No test measures a heap that is not
# collected first.
TEST_GOGC ?= 400

# A race-detector binary sleeps a second as it exits (GORACE's
# atexit_sleep_ms, 1000 by default), for goroutines still running to
# report a race. make test sets it to 0: the packages that start
# goroutines check with goleak that none outlives its test, and 40 test
# binaries asleep hold a core for 20 s. A GORACE of your own comes after
# it and wins.

# make test runs the tests; make lint checks the code without running
# it (go vet's every analyzer, staticcheck, dosimvet). One build serves
# both: lint compiles what it reads with the tests' flags ($(RACE); GOFLAGS
# for staticcheck, whose go list reads them), so each package, SQLite
# most of all, is compiled once. The tests' own vet pass is off
# (-vet=off): make lint runs it and more. make test does not lint: vet
# and staticcheck analyse every dependency from source, the standard
# library and SQLite too (some 40 s of CPU on a first run), and a first
# make test should cost what testing costs. .ci/run runs make lint
# before it.
#
# The two steps need nothing of each other, and make test runs them side
# by side (a make -j2 of its own), so that neither's last package leaves
# a core idle; their output interleaves package by package, and make test
# fails if either does. make test-race or make test-plain runs one.
test:
	@$(MAKE) --no-print-directory -j2 test-race test-plain

test-race:
	GOGC=$(TEST_GOGC) GORACE="atexit_sleep_ms=0 $(GORACE)" $(GO) test $(RACE) -ldflags='$(TEST_LDFLAGS)' -vet=off -count=1 -skip '$(TOOL_TESTS)' $$($(race_packages))

test-plain:
	GOGC=$(TEST_GOGC) $(GO) test -tags dosim_nosql -ldflags='$(TEST_LDFLAGS)' -vet=off -count=1 -run '$(FULL_SIZE_TESTS)|$(TOOL_TESTS)' ./explore ./examples/wallet $(TOOL_PACKAGES)

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
lint: vet
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
		if $(GO) test -tags "$$tags" -run '^$$' -fuzz "^$$name\$$" -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZE) ./$$pkg >$$log 2>&1; then \
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
	$(GO) test ./object -run '^$$' -bench 'SQLArenas' -cpu 1,2 -tags dosim_libcmalloc  # SQLite on libc's malloc: against BenchmarkSQLArenas above
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
