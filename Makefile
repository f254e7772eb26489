# toolmark — the two commands: `make run` and `make test`.
GO       ?= go
BIN      := bin/toolmark
FUZZTIME ?= 20s
ADDR     ?= 127.0.0.1:8080

.PHONY: run build test unit fuzz bench faults faults-short vet clean

## run: start toolmark serve with an embedded PostgreSQL and the offline demo model
run: build
	@scripts/need-postgres.sh
	$(BIN) serve --addr $(ADDR)

## build: compile the toolmark binary into bin/
build:
	$(GO) build -o $(BIN) ./cmd/toolmark

## test: vet, then every test (unit, database, HTTP, browser and MCP servers) with the race detector
test:
	@scripts/need-postgres.sh
	@scripts/need-pgbouncer.sh
	@scripts/need-browser.sh
	@scripts/need-mcp.sh
	@scripts/need-protocols.sh
	$(GO) vet ./...
	$(GO) test -race -count=1 -timeout 15m ./...

## unit: the tests without installing anything (database and browser tests skip when their services are missing, outside CI)
unit:
	$(GO) test -count=1 ./...

## fuzz: run every fuzz target for FUZZTIME each
fuzz:
	@scripts/fuzz.sh $(FUZZTIME)

## bench: the benchmarks whose figures the docs report
bench:
	$(GO) test -run '^$$' -bench . -benchmem ./toolcallmarkup/ ./markdown/ ./store/

## faults: the fault-injection suite at the counts of docs/reliability.md (about 15 minutes); FAULTS_FLAGS adds flags
## faults-short: the short form of the suite that CI runs after the tests (about 2 minutes)
faults faults-short: build
	@scripts/need-postgres.sh
	@scripts/need-pgbouncer.sh
	$(GO) run ./cmd/toolmark-faults --bin $(BIN) --preset $(if $(filter faults-short,$@),short,full) $(FAULTS_FLAGS)

vet:
	$(GO) vet ./...

clean:
	rm -rf bin
