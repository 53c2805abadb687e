package asyncevent

import (
	"context"
	"fmt"
)

// HumanPolicy is an event's human check (EventConfig.HumanCheck): ""
// when its participations need none; else each participation must carry
// a challenge provider's token that the deployment's HumanVerifier
// passes, and the policy says what happens when the provider cannot be
// reached: HumanRefuse or HumanAdmit (docs/ratelimit.md, Human check).
type HumanPolicy string

// The human check policies.
const (
	// HumanRefuse refuses a participation whose token cannot be verified
	// because the provider is unreachable (ErrHumanCheckUnavailable): the
	// default.
	HumanRefuse HumanPolicy = "refuse"
	// HumanAdmit admits it unverified (Participation.HumanCheck is
	// HumanAdmittedUnverified).
	HumanAdmit HumanPolicy = "admit"
)

// HumanCheck is an event's human check as an admin asks for it
// (NewEvent.HumanCheck).
type HumanCheck struct {
	// Required makes every participation carry a token the verifier
	// passes.
	Required bool
	// OnUnavailable is the policy when the provider cannot be reached:
	// HumanRefuse (default) or HumanAdmit. Only with Required.
	OnUnavailable HumanPolicy
}

// policy checks h and returns the policy an EventConfig stores: "" when
// no check is required.
func (h HumanCheck) policy() (HumanPolicy, error) {
	switch {
	case h.OnUnavailable != "" && h.OnUnavailable != HumanRefuse && h.OnUnavailable != HumanAdmit:
		return "", badEvent("humanCheck.onUnavailable", "humanCheck.onUnavailable must be %s or %s", HumanRefuse, HumanAdmit)
	case !h.Required && h.OnUnavailable != "":
		return "", badEvent("humanCheck.onUnavailable", "humanCheck.onUnavailable needs humanCheck.required")
	case !h.Required:
		return "", nil
	case h.OnUnavailable == "":
		return HumanRefuse, nil
	}
	return h.OnUnavailable, nil
}

// HumanVerdict is a challenge provider's answer on a token
// (HumanVerifier.Verify).
type HumanVerdict string

// The verdicts.
const (
	HumanPassed HumanVerdict = "passed"
	HumanFailed HumanVerdict = "failed"
)

// HumanOutcome is how a participation's human check ended
// (HumanCheckObserver): one of the constants below.
type HumanOutcome string

// The outcomes of a human check.
const (
	HumanOutcomePassed              HumanOutcome = "passed"
	HumanOutcomeFailed              HumanOutcome = "failed"
	HumanOutcomeMissing             HumanOutcome = "missing"
	HumanOutcomeUnavailableRefused  HumanOutcome = "unavailable_refused"
	HumanOutcomeUnavailableAdmitted HumanOutcome = "unavailable_admitted"
)

// HumanOutcomes lists every HumanOutcome (for metrics that start each at
// 0).
var HumanOutcomes = []HumanOutcome{HumanOutcomePassed, HumanOutcomeFailed, HumanOutcomeMissing, HumanOutcomeUnavailableRefused, HumanOutcomeUnavailableAdmitted}

// HumanAdmittedUnverified is Participation.HumanCheck for a participation
// admitted although its token could not be verified (HumanAdmit).
const HumanAdmittedUnverified = "admitted-unverified"

// MaxHumanToken bounds a human check token, in bytes (Turnstile's are
// up to 2048 characters).
const MaxHumanToken = 2048

// checkHuman runs the human check cfg asks for on in, before anything is
// written, and reports its outcome to the HumanCheckObserver. It returns
// HumanAdmittedUnverified when the policy admitted an unverified token,
// else "".
func (in *Ingest) checkHuman(ctx context.Context, cfg *EventConfig, p ParticipateInput) (string, error) {
	if cfg.HumanCheck == "" {
		return "", nil
	}
	outcome, admitted, err := in.verifyHuman(ctx, cfg, p)
	if in.cfg.HumanChecks != nil {
		in.cfg.HumanChecks.HumanChecked(outcome)
	}
	return admitted, err
}

// verifyHuman is checkHuman's decision: the outcome, the admission note
// and the error refusing the participation.
func (in *Ingest) verifyHuman(ctx context.Context, cfg *EventConfig, p ParticipateInput) (HumanOutcome, string, error) {
	if p.HumanToken == "" {
		return HumanOutcomeMissing, "", fmt.Errorf("%w: event %s requires humanToken", ErrHumanTokenMissing, cfg.EventID)
	}
	if len(p.HumanToken) > MaxHumanToken {
		return HumanOutcomeFailed, "", fmt.Errorf("%w: humanToken longer than %d bytes", ErrHumanCheckFailed, MaxHumanToken)
	}
	if in.cfg.Humans == nil {
		return HumanOutcomeUnavailableRefused, "", fmt.Errorf("%w: event %s requires a human check and this deployment has no verifier configured", ErrHumanCheckUnavailable, cfg.EventID)
	}
	verdict, err := in.cfg.Humans.Verify(ctx, p.HumanToken, p.ClientAddr)
	switch {
	case err != nil && cfg.HumanCheck == HumanAdmit:
		in.cfg.Log.Warn("human check provider unreachable; admitting unverified", "event", cfg.EventID, "err", err)
		return HumanOutcomeUnavailableAdmitted, HumanAdmittedUnverified, nil
	case err != nil:
		in.cfg.Log.Warn("human check provider unreachable; refusing", "event", cfg.EventID, "err", err)
		return HumanOutcomeUnavailableRefused, "", fmt.Errorf("%w: the challenge provider could not be reached; retry", ErrHumanCheckUnavailable)
	case verdict != HumanPassed:
		return HumanOutcomeFailed, "", fmt.Errorf("%w: the challenge provider did not pass humanToken", ErrHumanCheckFailed)
	}
	return HumanOutcomePassed, "", nil
}
