using MuxWatch.Model;

namespace MuxWatch.State;

/// <summary>
/// How one endpoint's polling stands: how far its timeline is complete, when a poll last read it or failed, what it
/// refuses, its clock, whether its latency monitor records, what its last poll dropped as not believable.
/// </summary>
/// <remarks>Thread-safe: the poller writes it, the correlator and the API read it.</remarks>
internal sealed class ServerPollingState
{
    private readonly Lock _gate = new();
    private DateTimeOffset? _completeThrough;
    private DateTimeOffset? _lastPollSuccess;
    private (string Message, DateTimeOffset Time)? _lastPollError;
    private IReadOnlyList<string> _refusedCommands = [];
    private TimeSpan? _clockOffset;
    private TimeSpan? _clockUncertainty;
    private bool? _latencyMonitorEnabled;
    private IReadOnlyList<string> _droppedValues = [];

    /// <summary>
    /// Every event that started before this time is in the timeline: the start of the latest poll that
    /// read everything it may read. A timeout caught before it can be correlated for good.
    /// </summary>
    internal DateTimeOffset? CompleteThrough
    {
        get
        {
            lock (_gate)
            {
                return _completeThrough;
            }
        }
    }

    /// <summary>A poll read what it may: every event that started before <paramref name="started"/> has been seen.</summary>
    internal void PollCompleted(DateTimeOffset started, DateTimeOffset finished)
    {
        lock (_gate)
        {
            if (_completeThrough is null || started > _completeThrough)
            {
                _completeThrough = started;
            }

            _lastPollSuccess = finished;
        }
    }

    /// <summary>A poll failed as a whole (timed out, no connection): reported, and the timeline is not complete past it.</summary>
    internal void PollFailed(string message, DateTimeOffset time)
    {
        lock (_gate)
        {
            _lastPollError = (message, time);
        }
    }

    /// <summary>Notes what the last poll dropped as not believable (<see cref="ServerPollingStatus.Dropped"/>).</summary>
    internal void NoteDropped(IReadOnlyList<string> dropped)
    {
        lock (_gate)
        {
            _droppedValues = dropped;
        }
    }

    /// <summary>Notes what the endpoint refuses, its clock offset and whether its latency monitor is on.</summary>
    internal void Describe(IReadOnlyList<string> refusedCommands, TimeSpan? clockOffset, TimeSpan? clockUncertainty, bool? latencyMonitorEnabled)
    {
        lock (_gate)
        {
            _refusedCommands = refusedCommands;
            _clockUncertainty = clockOffset is null ? _clockUncertainty : clockUncertainty;
            _clockOffset = clockOffset ?? _clockOffset;
            _latencyMonitorEnabled = latencyMonitorEnabled ?? _latencyMonitorEnabled;
        }
    }

    /// <summary>The polling state as <c>/api/targets</c> shows it, with the count of <paramref name="events"/> kept.</summary>
    internal ServerPollingStatus Status(int events)
    {
        lock (_gate)
        {
            return new ServerPollingStatus(
                _lastPollSuccess,
                _lastPollError?.Message,
                _lastPollError?.Time,
                _refusedCommands,
                _clockOffset?.TotalMilliseconds,
                _latencyMonitorEnabled,
                events)
            {
                Dropped = _droppedValues,
                ClockUncertaintyMs = _clockUncertainty?.TotalMilliseconds,
            };
        }
    }
}
