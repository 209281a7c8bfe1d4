using System.Net;
using MuxWatch.Configuration;
using MuxWatch.Export;
using MuxWatch.Pipeline;
using MuxWatch.Sources;
using MuxWatch.State;
using MuxWatch.Tracking;
using StackExchange.Redis;

namespace MuxWatch.StackExchangeRedis;

/// <summary>
/// Polls one endpoint on its cadence (<see cref="Cadence"/>: calm, or busy while the pipeline waits for a poll or an interval runs;
/// a whole back-off after an oversized reply), never two polls at once, never on the probe loop's thread; hands each poll that
/// <see cref="EndpointPollReader"/> read to the core (<see cref="ServerPolls.Apply"/>) and tells the pipeline it polled
/// (<see cref="IServerPollRequests.Polled"/>).
/// </summary>
internal sealed class EndpointPoller(ServerPolls polls, ServerTimeline timeline, IServerPollRequests requests, MuxWatchMetrics metrics, TimeProvider time, SlowlogSenders? senders = null)
{
    /// <summary>The busy cadence's floor: while something runs or waits, a poll every second (or every cycle, if slower).</summary>
    internal static readonly TimeSpan BusyInterval = TimeSpan.FromSeconds(1);

    private readonly EndpointPollReader _reader = new(timeline, requests, time, senders);
    private int _inFlight;
    private readonly Lock _applying = new();
    private bool _retired;
    private DateTimeOffset _lastStart = DateTimeOffset.MinValue;
    private long _clientTimeoutTicks = -1;

    /// <summary>The smallest timeout of the multiplexers watching the endpoint, set by the probe each cycle (read by a poll on another thread).</summary>
    public TimeSpan? ClientTimeout
    {
        get => Interlocked.Read(ref _clientTimeoutTicks) is var ticks and >= 0 ? TimeSpan.FromTicks(ticks) : null;
        set => Interlocked.Exchange(ref _clientTimeoutTicks, value?.Ticks ?? -1);
    }

    /// <summary>True while a poll is in flight (tests wait for its end).</summary>
    internal bool InFlight => Volatile.Read(ref _inFlight) == 1;

    /// <summary>The endpoint is no longer watched: a poll still in flight is dropped when it ends; once this returns, none writes again.</summary>
    public void Retire()
    {
        lock (_applying)
        {
            _retired = true;
        }
    }

    /// <summary>True when the pipeline waits for this endpoint's next poll, or an interval (a save, a load) runs on it: poll at the busy cadence.</summary>
    private bool PollSoon => requests.IsPollWanted(timeline.Endpoint) || timeline.IntervalRunning;

    /// <summary>
    /// Starts a poll when one is due (on the <see cref="Cadence"/>, or a whole back-off after an oversized reply) and none is in flight;
    /// while <paramref name="processQuiet"/>, the calm interval is <see cref="MuxWatchOptions.ServerPollQuietMultiple"/> times longer.
    /// </summary>
    public void StartIfDue(DateTimeOffset now, IConnectionMultiplexer connection, EndPoint endpoint, MuxWatchOptions settings, TimeSpan phase, bool processQuiet, CancellationToken stopping)
    {
        // After an oversized reply, a whole back-off from the last start (10% slack for the loop's ticks); else the PINGs' cadence (one wake of the pool),
        // a multiple of it while the process is quiet (a whole multiple: the slots stay the PINGs' ticks).
        var backoff = _reader.Backoff;
        var calm = processQuiet ? settings.ServerPollInterval * settings.ServerPollQuietMultiple : settings.ServerPollInterval;
        var due = backoff > TimeSpan.Zero
            ? now - _lastStart >= Max(backoff, settings.ServerPollInterval) * 0.9
            : Cadence.InNewSlot(_lastStart, now, PollSoon ? Min(settings.ServerPollInterval, Max(settings.ProbeInterval, BusyInterval)) : calm, phase);
        if (!due || Interlocked.CompareExchange(ref _inFlight, 1, 0) != 0)
        {
            return;
        }

        _lastStart = now;
        _ = PollAsync(connection, endpoint, settings.ServerPollTimeout, settings.KeySizes, stopping); // never awaited on the loop
    }

    private async Task PollAsync(IConnectionMultiplexer connection, EndPoint endpoint, TimeSpan timeout, bool keySizes, CancellationToken stopping)
    {
        try
        {
            using (ProbeScope.Enter())
            {
                var result = await _reader.ReadAsync(connection, endpoint, timeout, keySizes, ClientTimeout, stopping).ConfigureAwait(false);
                bool applied;
                lock (_applying)
                {
                    // A poll that ends after its endpoint was dropped would write its series again, for good.
                    applied = !_retired && polls.Apply(timeline, result);
                }

                if (applied)
                {
                    requests.Polled(timeline.Endpoint); // the pipeline settles what waited for this poll
                }
            }
        }
        catch (OperationCanceledException) when (stopping.IsCancellationRequested)
        {
        }
#pragma warning disable CA1031 // a poll is fire-and-forget: a failure here must be counted, never left unobserved
        catch (Exception ex)
#pragma warning restore CA1031
        {
            metrics.CountProbeFailure("server-poll", ex.GetType().Name);
        }
        finally
        {
            Volatile.Write(ref _inFlight, 0);
        }
    }

    private static TimeSpan Max(TimeSpan a, TimeSpan b) => a > b ? a : b;

    private static TimeSpan Min(TimeSpan a, TimeSpan b) => a < b ? a : b;
}
