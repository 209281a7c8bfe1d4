using System.ComponentModel;

namespace MuxWatch.State;

/// <summary>
/// Whether this process is busy: it completed thread-pool work items or used CPU past what an idle app does over
/// the last second or so, or did within the last <see cref="BusyFor"/>. A quiet process (an idle app) is watched at
/// a slower pace: the witness's tick and PINGs, the calm server poll (<see cref="Configuration.MuxWatchOptions.ServerPollQuietMultiple"/>),
/// the PINGs through the app's multiplexers (<see cref="Configuration.MuxWatchOptions.PingQuietMultiple"/>).
/// </summary>
/// <remarks>
/// <para>
/// One place for the fact, noted by whoever looks first (the witness's thread every tick, the probe loop every
/// cycle) and read by both: timeouts come from busy processes, and what an idle app pays for being watched is most
/// of what MuxWatch costs it (docs/benchmarks.md). Public for probe packages (MuxWatch.StackExchangeRedis's poller
/// reads it); only MuxWatch notes it.
/// </para>
/// <para>
/// The CPU the runtime spends compiling (<see cref="System.Runtime.JitInfo.GetCompilationTime"/>) is not counted: it is
/// the runtime warming up, not the app at work. Counted, it kept a freshly started idle app busy through its first
/// minute and at each wave of the JIT's recompilation (30 ms in a second is common then), so the app was PINGed and
/// polled at the busy pace exactly while the JIT was counting calls to decide what to compile again: measured side by side,
/// most of what the quiet pace was to save (docs/benchmarks.md, "The PING and the poll at the quiet pace").
/// </para>
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

    private readonly Func<(long WorkItems, double CpuMs, double CompilingMs)> _read;
    private readonly Lock _gate = new();
    private (DateTimeOffset Time, long WorkItems, double CpuMs)? _last;
    private DateTimeOffset _busyUntil;
    private bool _measured;

    /// <summary>Reads the process's own counters: the pool's completed work items, the CPU time and the time spent compiling.</summary>
    internal ProcessActivity()
        : this(static () => (ThreadPool.CompletedWorkItemCount, Environment.CpuUsage.TotalTime.TotalMilliseconds, System.Runtime.JitInfo.GetCompilationTime().TotalMilliseconds))
    {
    }

    /// <summary>Reads the counters <paramref name="read"/> gives (tests drive a quiet or a busy process), nothing compiled.</summary>
    internal ProcessActivity(Func<(long WorkItems, double CpuMs)> read)
        : this(() =>
        {
            var (workItems, cpuMs) = read();
            return (workItems, cpuMs, 0.0);
        })
    {
    }

    /// <summary>Reads the counters <paramref name="read"/> gives, the time spent compiling among them.</summary>
    internal ProcessActivity(Func<(long WorkItems, double CpuMs, double CompilingMs)> read) => _read = read;

    /// <summary>
    /// Notes the counters at <paramref name="now"/> (a span is measured once at least <see cref="Span"/> has passed
    /// since the last) and says whether the process is busy. <paramref name="poolCalm"/> false (the thread-pool probe saw
    /// work queued or more threads busy than the minimum) makes it busy at once: a pool whose threads are blocked completes
    /// few work items and uses little CPU, and it is the very thing to watch.
    /// </summary>
    internal bool NoteBusy(DateTimeOffset now, bool poolCalm = true)
    {
        // Over a second at least: the process's CPU time is counted in clock ticks (10 ms on Linux), so over one
        // 100 ms tick a single tick of CPU would read as a tenth of a core.
        var (workItems, cpuMs, compilingMs) = _read();
        cpuMs -= compilingMs; // the runtime warming up is not the app at work (remarks)
        lock (_gate)
        {
            if (!poolCalm)
            {
                _busyUntil = now + BusyFor;
            }

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
