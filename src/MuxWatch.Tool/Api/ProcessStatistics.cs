using MuxWatch.Hosting;

namespace MuxWatch.Tool.Api;

/// <summary>
/// Faults inside the process that nothing else reports, shown as <c>process</c> in <c>GET /api/status</c>:
/// a task whose exception nobody observed is a bug, so it is counted (and logged), never silent.
/// </summary>
internal sealed partial class ProcessStatistics(ILogger<ProcessStatistics> logger) : IMuxWatchStatusSection, IHostedService
{
    private long _unobserved;

    // A hosted service so that it listens from start-up, not from the first /api/status.
    public Task StartAsync(CancellationToken cancellationToken)
    {
        TaskScheduler.UnobservedTaskException += OnUnobserved;
        return Task.CompletedTask;
    }

    public Task StopAsync(CancellationToken cancellationToken)
    {
        TaskScheduler.UnobservedTaskException -= OnUnobserved;
        return Task.CompletedTask;
    }

    public string Name => "process";

    public IReadOnlyDictionary<string, long> Counts() => new OrderedDictionary<string, long>
    {
        ["unobservedTaskExceptions"] = Interlocked.Read(ref _unobserved),
        ["threads"] = System.Diagnostics.Process.GetCurrentProcess().Threads.Count,
        ["workingSetBytes"] = Environment.WorkingSet,
    };

    private void OnUnobserved(object? sender, UnobservedTaskExceptionEventArgs e)
    {
        Interlocked.Increment(ref _unobserved);
        var reason = e.Exception.InnerException?.GetType().Name ?? e.Exception.GetType().Name;
        LogUnobserved(logger, reason);
    }

    [LoggerMessage(EventId = 60, Level = LogLevel.Error, Message = "A task failed and nobody observed it ({Reason}): a MuxWatch bug, counted in /api/status")]
    private static partial void LogUnobserved(ILogger logger, string reason);
}
