using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;
using MuxWatch.Configuration;
using MuxWatch.Model;
using MuxWatch.Pipeline;

namespace MuxWatch.Sources;

/// <summary>
/// Starts the first-chance catcher and submits what it caught to the pipeline, off the app's threads.
/// </summary>
internal sealed partial class TimeoutCaptureService(
    FirstChanceRedisErrorCatcher catcher,
    TimeoutPipeline pipeline,
    IOptions<MuxWatchOptions> options,
    ILogger<TimeoutCaptureService> logger) : BackgroundService
{
    /// <summary>
    /// Subscribes before the host reports started (ExecuteAsync may begin later, on another thread),
    /// so a timeout thrown right after start-up is not missed.
    /// </summary>
    public override Task StartAsync(CancellationToken cancellationToken)
    {
        if (options.Value.CaptureFirstChanceExceptions)
        {
            catcher.Start();
        }

        return base.StartAsync(cancellationToken);
    }

    protected override async Task ExecuteAsync(CancellationToken stoppingToken)
    {
        if (!options.Value.CaptureFirstChanceExceptions)
        {
            return;
        }

        try
        {
            await foreach (var caught in catcher.ReadAllAsync(stoppingToken).ConfigureAwait(false))
            {
                try
                {
                    pipeline.Submit(new TimeoutObservation(caught.Time, TimeoutSources.FirstChance, RedisMessage.FromException(caught.Exception))
                    {
                        ThreadPoolAtCatch = caught.ThreadPool,
                        ThrownThrough = ThrownThrough.Of(caught.Exception),
                    });
                }
#pragma warning disable CA1031 // one unreadable exception must not stop the capture of the next
                catch (Exception ex)
#pragma warning restore CA1031
                {
                    LogFailed(logger, ex.GetType().Name);
                }
            }
        }
        catch (OperationCanceledException) when (stoppingToken.IsCancellationRequested)
        {
        }
    }

    public override void Dispose()
    {
        catcher.Dispose();
        base.Dispose();
    }

    [LoggerMessage(EventId = 2, Level = LogLevel.Warning, Message = "A caught Redis exception could not be recorded ({Reason})")]
    private static partial void LogFailed(ILogger logger, string reason);
}
