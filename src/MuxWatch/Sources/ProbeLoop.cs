using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;
using MuxWatch.Configuration;
using MuxWatch.Export;

namespace MuxWatch.Sources;

/// <summary>
/// The one loop that samples every <see cref="IPeriodicProbe"/> each <see cref="MuxWatchOptions.ProbeInterval"/>,
/// on a thread of its own.
/// </summary>
/// <remarks>
/// Why a dedicated thread: the loop must keep sampling when the app's thread pool is starved, which is
/// exactly when its samples matter, so the sampling itself never waits for a pool thread (an await
/// continuation would). The probes' own waits (PINGs) still complete on the pool; only the sampling is
/// the loop's. The starvation test reads the app's gauges while 300 work items block its pool.
/// A cycle never overlaps the previous one (one thread); a cycle that fails is logged, counted in
/// <c>muxwatch_probe_failures_total</c>, and the loop goes on.
/// </remarks>
internal sealed partial class ProbeLoop(
    IEnumerable<IPeriodicProbe> probes,
    MuxWatchMetrics metrics,
    ProbeLoopHealth health,
    TimeProvider time,
    IOptions<MuxWatchOptions> options,
    ILogger<ProbeLoop> logger,
    ProbeCycleRequests? requests = null) : BackgroundService
{
    /// <summary>How soon after a cycle began a requested one may start (<see cref="ProbeCycleRequests"/>).</summary>
    internal static readonly TimeSpan EarliestEarlyCycle = TimeSpan.FromMilliseconds(100);

    private readonly IPeriodicProbe[] _probes = [.. probes];
    private WaitHandle[]? _handles;

    protected override Task ExecuteAsync(CancellationToken stoppingToken)
    {
        var finished = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var thread = new Thread(() =>
        {
            try
            {
                Run(stoppingToken);
                finished.TrySetResult();
            }
#pragma warning disable CA1031 // the loop's thread must never take the process down
            catch (Exception ex)
#pragma warning restore CA1031
            {
                finished.TrySetException(ex);
            }
        })
        {
            IsBackground = true,
            Name = "MuxWatch probe loop",
        };
        thread.Start();
        return finished.Task;
    }

    private void Run(CancellationToken stopping)
    {
        var interval = options.Value.ProbeInterval;
        var early = false;
        while (!stopping.IsCancellationRequested)
        {
            var started = time.GetTimestamp();
            RunCycle(stopping);
            switch (Wait(interval, started, acceptRequest: !early, stopping))
            {
                case Woken.Stopping:
                    return;
                case Woken.Requested:
                    early = true;
                    break;
                default:
                    early = false;
                    break;
            }
        }
    }

    /// <summary>One cycle: every probe, each isolated from the others' failures.</summary>
    internal void RunCycle(CancellationToken stopping)
    {
        var started = time.GetTimestamp();
        var now = time.GetUtcNow();
        foreach (var probe in _probes)
        {
            try
            {
                probe.Sample(now, stopping);
            }
            catch (OperationCanceledException) when (stopping.IsCancellationRequested)
            {
                return;
            }
#pragma warning disable CA1031 // one failing probe must not stop the others or the loop
            catch (Exception ex)
#pragma warning restore CA1031
            {
                metrics.ProbeFailures.WithLabels(probe.Name, ex.GetType().Name).Inc();
                LogProbeFailed(logger, probe.Name, ex.GetType().Name, ex);
            }
        }

        metrics.ObserveProbeCycle(time.GetElapsedTime(started).TotalSeconds);
        health.CycleCompleted(time.GetUtcNow());
    }

    private enum Woken
    {
        IntervalOver,
        Requested,
        Stopping,
    }

    /// <summary>
    /// Waits one interval, or less when <paramref name="acceptRequest"/> and a cycle is requested (<see cref="ProbeCycleRequests"/>),
    /// though never to begin sooner than <see cref="EarliestEarlyCycle"/> after the cycle that <paramref name="started"/>.
    /// </summary>
    private Woken Wait(TimeSpan interval, long started, bool acceptRequest, CancellationToken stopping)
    {
        if (time != TimeProvider.System)
        {
            // Another clock (a test's fake): its timers fire when the test advances it; requests are not heard.
            try
            {
                Task.Delay(interval, time, stopping).Wait(stopping);
                return Woken.IntervalOver;
            }
            catch (OperationCanceledException)
            {
                return Woken.Stopping;
            }
        }

        // Waits on this thread, not on a timer whose callback would need the thread pool (see remarks).
        if (requests is null)
        {
            return stopping.WaitHandle.WaitOne(interval) ? Woken.Stopping : Woken.IntervalOver;
        }

        if (!acceptRequest)
        {
            // After an early cycle: what is asked meanwhile, the regular cycle that ends this wait does anyway.
            var stopped = stopping.WaitHandle.WaitOne(interval);
            requests.Clear();
            return stopped ? Woken.Stopping : Woken.IntervalOver;
        }

        _handles ??= [stopping.WaitHandle, requests.Requested];
        var woken = WaitHandle.WaitAny(_handles, interval);
        if (woken == 0)
        {
            return Woken.Stopping;
        }

        if (woken == WaitHandle.WaitTimeout)
        {
            return Woken.IntervalOver;
        }

        var soonest = EarliestEarlyCycle - time.GetElapsedTime(started);
        return soonest > TimeSpan.Zero && stopping.WaitHandle.WaitOne(soonest) ? Woken.Stopping : Woken.Requested;
    }

    [LoggerMessage(EventId = 30, Level = LogLevel.Warning, Message = "Probe {Probe} failed in this cycle ({Reason}); the loop goes on")]
    private static partial void LogProbeFailed(ILogger logger, string probe, string reason, Exception exception);
}
