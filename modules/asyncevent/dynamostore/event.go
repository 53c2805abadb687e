// Events: an event's CONFIG and CAPACITY items, created and moved
// through the event lifecycle together.

package dynamostore

import (
	"context"
	"errors"
	"fmt"

	"github.com/pacerhq/pacer/modules/asyncevent"
	"github.com/pacerhq/pacer/sdk/ddb"
)

// CreateEvent implements asyncevent.EventStore.
func (s *Store) CreateEvent(ctx context.Context, cfg *asyncevent.EventConfig) error {
	ops := []*ddb.Op{s.configs.Create(eventConfigItem(cfg)).Label("config")}
	if cfg.Status == asyncevent.EventOpen {
		ops = append(ops, s.open.Put(&OpenEventItem{EventID: cfg.EventID, EventType: cfg.EventType, EndsAt: cfg.EndsAt(), TTL: cfg.TTL}))
	}
	if cfg.EventType == asyncevent.FirstCome {
		ops = append(ops, s.caps.Create(&CapacityItem{
			EventID: cfg.EventID, CapacityTotal: cfg.CapacityTotal, CapacityRemaining: cfg.CapacityTotal, UpdatedAt: cfg.CreatedAt, TTL: cfg.TTL,
		}).Label("capacity"))
	}
	err := s.db.Transact(ctx, ops...)
	if errors.Is(err, ddb.ErrConditionFailed) {
		return fmt.Errorf("%w: %s", asyncevent.ErrEventExists, cfg.EventID)
	}
	if err == nil {
		s.learn(cfg)
	}
	return err
}

// GetEvent implements asyncevent.EventReader.
func (s *Store) GetEvent(ctx context.Context, eventID string, strong bool) (*asyncevent.EventConfig, error) {
	get := s.configs.Get
	if strong {
		get = s.configs.GetStrong
	}
	it, err := get(ctx, configKey(eventID))
	if errors.Is(err, ddb.ErrNotFound) {
		return nil, fmt.Errorf("%w: %s", asyncevent.ErrEventNotFound, eventID)
	}
	if err != nil {
		return nil, err
	}
	cfg := it.eventConfig()
	s.learn(cfg)
	return cfg, nil
}

// GetCapacity implements asyncevent.StatsReader.
func (s *Store) GetCapacity(ctx context.Context, eventID string) (*asyncevent.Capacity, error) {
	it, err := s.caps.GetStrong(ctx, capKey(eventID))
	if errors.Is(err, ddb.ErrNotFound) {
		return nil, fmt.Errorf("%w: %s has no capacity", asyncevent.ErrEventNotFound, eventID)
	}
	if err != nil {
		return nil, err
	}
	return it.capacity(), nil
}

// MoveEvent implements asyncevent.EventStore.
func (s *Store) MoveEvent(ctx context.Context, m asyncevent.EventMove) error {
	eventID, from, to := m.EventID, m.From, m.To
	u := ddb.Transition(s.configs, configKey(eventID), eventMachine, to, from).Label("event")
	for k, v := range m.Set {
		u.Set(k, v)
	}
	if from != asyncevent.EventOpen {
		err := u.Run(ctx)
		var ce *ddb.ConditionError
		if errors.As(err, &ce) {
			return eventStateErr(eventID, ce.Exists(), ce.Decode)
		}
		return err
	}
	// Out of OPEN: off the open events' list in the same write.
	err := s.db.Transact(ctx, u.Op(), s.open.Delete(openKey(eventID)))
	var te *ddb.TxError
	if errors.As(err, &te) {
		if r := te.Reason("event"); r != nil {
			return eventStateErr(eventID, r.Item != nil, r.Decode)
		}
	}
	return err
}

// eventStateErr is the *asyncevent.EventStateError of a refused condition
// on an event: exists says whether the event exists, and decode reads it as
// it is now (from a *ddb.ConditionError or a *ddb.TxReason).
func eventStateErr(eventID string, exists bool, decode func(any) error) error {
	ese := &asyncevent.EventStateError{EventID: eventID}
	if exists {
		var it EventConfigItem
		if err := decode(&it); err != nil {
			return err
		}
		ese.Current = it.eventConfig()
	}
	return ese
}
