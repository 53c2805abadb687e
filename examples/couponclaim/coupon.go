package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"github.com/pacerhq/pacer/sdk/ddb"
)

// The service's own single table. Coupons and their claims share a
// partition; claims also go on GSI1 so a user can list theirs.
var schema = ddb.Schema{
	PK: "PK", SK: "SK",
	Indexes:      []ddb.Index{{Name: "GSI1", PK: "GSI1PK", SK: "GSI1SK"}},
	TTLAttribute: "expiresAt",
}

var (
	couponPK = ddb.MustFormat("COUPON#{couponId}")
	claimSK  = ddb.MustFormat("CLAIM#{userId}")
	userPK   = ddb.MustFormat("USER#{userId}")
	byTimeSK = ddb.MustFormat("CLAIMED#{claimedAt}#COUPON#{couponId}")
)

// Coupon is a limited coupon: Remaining counts down to zero.
type Coupon struct {
	CouponID  string `dynamodbav:"couponId"`
	Title     string `dynamodbav:"title"`
	Total     int64  `dynamodbav:"total"`
	Remaining int64  `dynamodbav:"remaining"`
}

// Claim is one user's claim of one coupon. It is the only item on GSI1.
type Claim struct {
	CouponID  string `dynamodbav:"couponId"`
	UserID    string `dynamodbav:"userId"`
	ClaimedAt int64  `dynamodbav:"claimedAt"`
	GSI1PK    string `dynamodbav:"GSI1PK"`
	GSI1SK    string `dynamodbav:"GSI1SK"`
	ExpiresAt int64  `dynamodbav:"expiresAt,omitempty"`
}

func couponKey(id string) ddb.Key { return ddb.Key{PK: couponPK.Build(id), SK: "META"} }

func claimKey(couponID, userID string) ddb.Key {
	return ddb.Key{PK: couponPK.Build(couponID), SK: claimSK.Build(userID)}
}

// Errors of the coupon service.
var (
	ErrNoCoupon       = errors.New("couponclaim: no such coupon")
	ErrSoldOut        = errors.New("couponclaim: coupon sold out")
	ErrAlreadyClaimed = errors.New("couponclaim: already claimed")
)

// Service claims coupons.
type Service struct {
	db      *ddb.DB
	coupons *ddb.Entity[Coupon]
	claims  *ddb.Entity[Claim]
	now     func() time.Time
}

// NewService returns a Service on table, which it does not create (see
// ddb.Table.Ensure).
func NewService(table *ddb.Table) *Service {
	return &Service{
		db:      table.DB(),
		coupons: ddb.NewEntity(table, "COUPON", func(c *Coupon) ddb.Key { return couponKey(c.CouponID) }),
		claims:  ddb.NewEntity(table, "CLAIM", func(c *Claim) ddb.Key { return claimKey(c.CouponID, c.UserID) }, "GSI1"),
		now:     time.Now,
	}
}

// Issue creates a coupon with n units; issuing the same id twice is an
// error carrying nothing new.
func (s *Service) Issue(ctx context.Context, id, title string, n int64) error {
	err := s.coupons.Create(&Coupon{CouponID: id, Title: title, Total: n, Remaining: n}).Run(ctx)
	if errors.Is(err, ddb.ErrConditionFailed) {
		return fmt.Errorf("couponclaim: coupon %s already issued: %w", id, err)
	}
	return err
}

// Claim takes one unit of coupon for user, once per user. The claim and the
// decrement are one transaction, so a unit is never taken without a claim
// nor a claim recorded without a unit. A repeated claim returns
// ErrAlreadyClaimed with the first claim, read from the cancellation reason
// rather than a second call.
func (s *Service) Claim(ctx context.Context, couponID, userID string) (*Claim, error) {
	now := s.now()
	c := &Claim{
		CouponID: couponID, UserID: userID, ClaimedAt: now.UnixMilli(),
		GSI1PK:    userPK.Build(userID),
		GSI1SK:    byTimeSK.Build(ddb.Millis(now.UnixMilli()), couponID),
		ExpiresAt: now.Add(90 * 24 * time.Hour).Unix(),
	}
	zero := int64(0)
	// DB.Transact itself retries cancellations caused only by a concurrent
	// transaction on the same coupon (TransactionConflict).
	err := s.db.Transact(ctx,
		s.claims.Create(c).Label("claim"),
		s.coupons.Update(couponKey(couponID)).MustExist().Bounded("remaining", -1, &zero, nil).Label("coupon").Op(),
	)
	var te *ddb.TxError
	if !errors.As(err, &te) {
		return c, err // nil, or not a cancellation
	}
	if r := te.Reason("claim"); r != nil {
		var first Claim
		if err := r.Decode(&first); err != nil {
			return nil, err
		}
		return &first, ErrAlreadyClaimed
	}
	if r := te.Reason("coupon"); r != nil {
		if r.Item == nil {
			return nil, ErrNoCoupon
		}
		return nil, ErrSoldOut
	}
	return nil, err
}

// Coupon returns a coupon as it is now.
func (s *Service) Coupon(ctx context.Context, id string) (*Coupon, error) {
	c, err := s.coupons.GetStrong(ctx, couponKey(id))
	if errors.Is(err, ddb.ErrNotFound) {
		return nil, ErrNoCoupon
	}
	return c, err
}

// ClaimsOf returns one page of a user's claims, newest first, and the
// cursor of the next page ("" on the last).
func (s *Service) ClaimsOf(ctx context.Context, userID string, limit int, cursor string) ([]*Claim, string, error) {
	p, err := s.claims.Query("GSI1", userPK.Build(userID)).Desc().Limit(limit).After(cursor).Page(ctx)
	if err != nil {
		return nil, "", err
	}
	return p.Items, p.Cursor, nil
}

// Claimants returns how many users claimed a coupon, reading its partition.
func (s *Service) Claimants(ctx context.Context, couponID string) (int, error) {
	n := 0
	q := s.claims.Query("", couponPK.Build(couponID)).BeginsWith(claimSK.Prefix()).
		Filter(expression.AttributeExists(expression.Name("userId")))
	for _, err := range q.All(ctx) {
		if err != nil {
			return 0, err
		}
		n++
	}
	return n, nil
}
