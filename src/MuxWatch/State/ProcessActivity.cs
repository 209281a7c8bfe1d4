using System.ComponentModel;

namespace MuxWatch.State;

/// <summary>
/// Whether this process is busy: it completed thread-pool work items or used CPU past what an idle app does over
/// the last second or so, or did within the last <see cref="BusyFor"/>. A quiet process (an idle app) is watched at
/// a slower pace: the witness's tick and PINGs, the calm server poll (<see cref="Configuration.MuxWatchOptions.ServerPollQuietMultiple"/>).
/// </summary>
/// <remarks>
/// One place for the fact, noted by whoever looks first (the witness's thread every tick, the probe loop every
/// cycle) and read by both: timeouts come from busy processes, and what an idle app pays for being watched is most
/// of what MuxWatch costs it (docs/benchmarks.md). Public for probe packages (MuxWatch.StackExchangeRedis's poller
/// reads it); only MuxWatch notes it.
/// </remarks>
[EditorBrowsable(EditorBrowsableState.Never)] // the probe-package contract (docs/public-api.md): for MuxWatch's own packages, not apps
public sealed class ProcessActivity
{
    /// <summary>The span the process's activity is measured over.</summary>
    internal static readonly TimeSpan Span = TimeSpan.FromSeconds(1);

    /// <summary>How long the process counts as busy after a span that saw it busy.</summary>
    internal static readonly TimeSpan BusyFor = TimeSpan.FromSeconds(5);

    /// <summary>Pool work items a second from which the process counts as busy (an idle ASP.NET Core app completes one or two).</summary>
    internal const double BusyWorkItemsPerSecond = 10;

    /// <summary>The share of one core from which the process counts as busy (an idle app uses a fraction of a percent).</summary>
    internal const double BusyCpuShare = 0.02;

    private readonly Func<(long WorkItems, double CpuMs)> _read;
    private readonly Lock _gate = new();
    private (DateTimeOffset Time, long WorkItems, double CpuMs)? _last;
    private DateTimeOffset _busyUntil;
    private bool _measured;

    /// <summary>Reads the process's own counters: the pool's completed work items and the CPU time.</summary>
    internal ProcessActivity()
        : this(static () => (ThreadPool.CompletedWorkItemCount, Environment.CpuUsage.TotalTime.TotalMilliseconds))
    {
    }

    /// <summary>Reads the counters <paramref name="read"/> gives (tests drive a quiet or a busy process).</summary>
    internal ProcessActivity(Func<(long WorkItems, double CpuMs)> read) => _read = read;

    /// <summary>
    /// Notes the counters at <paramref name="now"/> (a span is measured once at least <see cref="Span"/> has passed
    /// since the last) and says whether the process is busy.
    /// </summary>
    internal bool NoteBusy(DateTimeOffset now)
    {
        // Over a second at least: the process's CPU time is counted in clock ticks (10 ms on Linux), so over one
        // 100 ms tick a single tick of CPU would read as a tenth of a core.
        var (workItems, cpuMs) = _read();
        lock (_gate)
        {
            if (_last is not { } last)
            {
                _last = (now, workItems, cpuMs);
            }
            else if (now - last.Time >= Span)
            {
                var seconds = (now - last.Time).TotalSeconds;
                if ((workItems - last.WorkItems) / seconds >= BusyWorkItemsPerSecond || (cpuMs - last.CpuMs) / (1000 * seconds) >= BusyCpuShare)
                {
                    _busyUntil = now + BusyFor;
                }

                _last = (now, workItems, cpuMs);
                _measured = true;
            }

            return now < _busyUntil;
        }
    }

    /// <summary>
    /// True once a whole span has been measured and the process has been quiet since <see cref="BusyFor"/> ago;
    /// false before anything was measured (nothing noted it yet: the witness off and the probe loop not started).
    /// </summary>
    public bool IsQuiet(DateTimeOffset now)
    {
        lock (_gate)
        {
            return _measured && now >= _busyUntil;
        }
    }
}
