using System.Globalization;
using System.Runtime.CompilerServices;
using Microsoft.Diagnostics.NETCore.Client;
using Microsoft.Extensions.Logging;
using MuxWatch.Configuration;
using MuxWatch.Export;
using MuxWatch.Model;
using MuxWatch.Reading;
using MuxWatch.State;

namespace MuxWatch.Sources;

/// <summary>
/// Captures, once per starvation, where the pool's workers are: asked by the runtime's own word that the pool
/// starves (<see cref="ThreadPoolEventListener"/>), it samples every managed thread's stack for a fraction of a
/// second through an EventPipe session MuxWatch opens on its own process, and keeps the sum
/// (<see cref="PoolStackReader"/>) in <see cref="PoolStackCaptures"/> for the diagnosis, the API, the page and the log.
/// </summary>
/// <remarks>
/// <para>
/// Everything runs on a thread of its own: the pool is the thing that is starved, and the session's reader must
/// not wait for it (measured: a stream copied by an async call on the starved pool kept the session's stop waiting
/// 7.4 s; read on a thread, 0.13 s). A session of MuxWatch's own takes nothing the app owns: the runtime keeps
/// many sessions side by side, and a profiler or <c>dotnet-trace</c> attached to the app goes on.
/// </para>
/// <para>
/// Where it cannot work it says so once and never tries again: the runtime's diagnostics disabled
/// (<c>DOTNET_EnableDiagnostics=0</c>), Native AOT (no JIT's method names to resolve), a diagnostics socket the
/// process may not open. A capture that fails otherwise (a full disk) is counted and logged; the next starvation
/// tries again.
/// </para>
/// </remarks>
internal sealed partial class PoolStackCapturer(PoolStackCaptures captures, MuxWatchMetrics metrics, TimeProvider time, ILogger<PoolStackCapturer> logger)
{
    /// <summary>
    /// How long the stacks are sampled: a blocked worker stays where it is, and one round of the sampler sees every
    /// thread (a round every millisecond with a few threads; with 2,000 workers 200 frames deep one round takes about
    /// 100 ms, and 250 ms of sampling held the app in more rounds than it needed: docs/benchmarks.md, capture-cost).
    /// </summary>
    internal static readonly TimeSpan SampleFor = TimeSpan.FromMilliseconds(50);

    private Thread? _running;

    /// <summary>Why no capture is ever taken in this process with these settings, known before any starvation; null when one can be.</summary>
    public static string? WhyNever(MuxWatchOptions options)
    {
        ArgumentNullException.ThrowIfNull(options);
        return options.PoolStackCapture ? WhyUnavailable() : "it is turned off (MuxWatch:PoolStackCapture=false)";
    }

    /// <summary>Why this process can never be captured; null when it can.</summary>
    private static string? WhyUnavailable()
    {
        if (!RuntimeFeature.IsDynamicCodeSupported)
        {
            return "a Native AOT app: its stacks cannot be resolved in-process (run dotnet-stack against a JIT build instead)";
        }

        foreach (var variable in (string[])["DOTNET_EnableDiagnostics", "COMPlus_EnableDiagnostics", "DOTNET_EnableDiagnostics_IPC"])
        {
            if (Environment.GetEnvironmentVariable(variable) == "0")
            {
                return $"the runtime's diagnostics are disabled ({variable}=0)";
            }
        }

        return null;
    }

    /// <summary>Starts a capture when the pool starves, unless one runs or one began within the interval; returns at once.</summary>
    /// <param name="trigger">What asked: the runtime's reason for adding threads.</param>
    public void Request(string trigger)
    {
        var begun = time.GetUtcNow();
        if (!captures.TryBegin(begun))
        {
            return;
        }

        var thread = new Thread(() => Capture(trigger, begun)) { IsBackground = true, Name = "MuxWatch pool stacks" };
        try
        {
            thread.Start();
            _running = thread;
        }
        catch (OutOfMemoryException ex)
        {
            // No thread to be had (the process at its limit): this capture is given up, the next starvation tries again.
            captures.Fail($"the last capture failed (no thread could be started: {ex.Message}); the next starvation tries again");
            metrics.RecordStackCapture("failed");
        }
    }

    /// <summary>The pool has been calm a while: the next starvation is captured as another episode.</summary>
    public void PoolCalm() => captures.PoolCalm();

    /// <summary>Says once, at start, why no capture will be taken, when the process cannot be captured (not when it is turned off).</summary>
    public void SayWhyNever()
    {
        if (captures.Unavailable is { } reason && WhyUnavailable() is not null)
        {
            LogUnavailable(logger, reason, null);
        }
    }

    /// <summary>Waits for the capture under way, if any (tests, and a host stopping: no temporary file left behind).</summary>
    public bool WaitForCapture(TimeSpan timeout) => _running is not { } thread || thread.Join(timeout);

    private void Capture(string trigger, DateTimeOffset begun)
    {
        var started = time.GetTimestamp();
        if (WhyUnavailable() is { } unavailable)
        {
            End(unavailable, null);
            return;
        }

        try
        {
            var (stacks, eventsLost) = Sample();
            var (workers, blocked, busy, sites) = PoolStackReader.Read(stacks);
            var capture = new PoolStackCapture(begun, time.GetElapsedTime(started).TotalMilliseconds, trigger, workers, blocked, busy, sites) { EventsLost = eventsLost };
            captures.Complete(capture);
            metrics.RecordStackCapture("captured");
            LogCaptured(logger, trigger, workers, blocked, busy, Describe(capture), capture.TookMs, eventsLost);
        }
        catch (Exception ex) when (ex is ServerNotAvailableException or UnsupportedCommandException or UnauthorizedAccessException or PlatformNotSupportedException)
        {
            End($"the runtime's diagnostics socket could not be used ({ex.GetType().Name}: {ex.Message})", ex);
        }
#pragma warning disable CA1031 // a capture that fails costs that capture only: counted, logged, the next starvation tries again
        catch (Exception ex)
#pragma warning restore CA1031
        {
            captures.Fail($"the last capture failed ({ex.GetType().Name}: {ex.Message}); the next starvation tries again");
            metrics.RecordStackCapture("failed");
            LogFailed(logger, ex.GetType().Name, ex);
        }
    }

    private void End(string unavailable, Exception? exception)
    {
        captures.Never(unavailable);
        metrics.RecordStackCapture("unavailable");
        LogUnavailable(logger, unavailable, exception);
    }

    /// <summary>The stacks, innermost frame first; none in a Native AOT app (the constant check lets the trimmer drop the session's code there).</summary>
    private static (List<IReadOnlyList<ManagedFrame>> Stacks, int EventsLost) Sample()
    {
        if (!RuntimeFeature.IsDynamicCodeSupported)
        {
            return ([], 0);
        }

        var (stacks, _, _, eventsLost) = EventPipeStacks.Sample(SampleFor);
        return (stacks, eventsLost);
    }

    /// <summary>The capture's sites as one line: <c>OrderService.LoadCart (37 blocked via GetAwaiter().GetResult()); Hot.Spin (3 busy)</c>.</summary>
    internal static string Describe(PoolStackCapture capture) =>
        capture.Sites.Count == 0
            ? "no frame of the app's code on the pool's workers"
            : string.Join("; ", capture.Sites.Take(5).Select(site => string.Create(CultureInfo.InvariantCulture,
                $"{site.Method} ({site.Threads} {(site.Blocked ? $"blocked via {site.BlockedVia}" : "busy")})")));

    [LoggerMessage(EventId = 60, Level = LogLevel.Warning,
        Message = "The thread pool starved ({Trigger}); its workers' stacks: {Workers} workers, {Blocked} blocked, {Busy} busy: {Sites} (captured in {TookMs:F0} ms; {EventsLost} events lost)")]
    private static partial void LogCaptured(ILogger logger, string trigger, int workers, int blocked, int busy, string sites, double tookMs, int eventsLost);

    [LoggerMessage(EventId = 61, Level = LogLevel.Information,
        Message = "The thread pool's stacks cannot be captured in this process: {Reason}. Starvation timeouts are still diagnosed, without the code that blocked")]
    private static partial void LogUnavailable(ILogger logger, string reason, Exception? exception);

    [LoggerMessage(EventId = 62, Level = LogLevel.Warning, Message = "A stack capture of the thread pool failed ({Reason}); the next starvation tries again")]
    private static partial void LogFailed(ILogger logger, string reason, Exception exception);
}
