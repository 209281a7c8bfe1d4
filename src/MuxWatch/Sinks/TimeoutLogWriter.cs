using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;
using MuxWatch.Configuration;
using MuxWatch.Model;
using MuxWatch.Pipeline;

namespace MuxWatch.Sinks;

/// <summary>
/// Writes each caught timeout's diagnosis to the app's log, so the cause sits next to the exception
/// the app already logs. At most one line per cause per <see cref="MuxWatchOptions.TimeoutLogInterval"/>:
/// a storm costs one line per cause per interval, and the next line says how many were left out.
/// </summary>
/// <remarks>Keys are never logged (they may hold user data): the command, endpoint, cause, evidence and advice are.</remarks>
internal sealed partial class TimeoutLogWriter(ILogger<TimeoutLogWriter> logger, TimeProvider time, IOptions<MuxWatchOptions> options) : ITimeoutSink
{
    private readonly Lock _gate = new();
    private readonly Dictionary<TimeoutCause, (DateTimeOffset LastWritten, int LeftOut)> _byCause = [];

    // Written once the diagnosis is final, so the line names the cause the metrics count.
    public void Publish(ObservedTimeout timeout)
    {
    }

    public void Settled(ObservedTimeout timeout)
    {
        var settings = options.Value;
        if (!settings.LogTimeouts || !logger.IsEnabled(LogLevel.Warning))
        {
            return;
        }

        var cause = timeout.Diagnosis.Cause;
        int leftOut;
        lock (_gate)
        {
            var now = time.GetUtcNow();
            if (_byCause.TryGetValue(cause, out var last) && now - last.LastWritten < settings.TimeoutLogInterval)
            {
                _byCause[cause] = (last.LastWritten, last.LeftOut + 1);
                return;
            }

            leftOut = last.LeftOut;
            _byCause[cause] = (now, 0);
        }

        LogTimeout(
            logger,
            timeout.Report.Command ?? "unknown",
            timeout.Endpoint,
            cause.ToName(),
            timeout.Diagnosis.Evidence.Count > 0 ? timeout.Diagnosis.Evidence[0].Line : string.Empty,
            timeout.Diagnosis.Advice,
            leftOut);
    }

    [LoggerMessage(EventId = 10, Level = LogLevel.Warning,
        Message = "Redis timeout on {Endpoint} ({Command}): cause {Cause}; {Evidence}. {Advice} ({LeftOut} more with this cause since the last line)")]
    private static partial void LogTimeout(ILogger logger, string command, string endpoint, string cause, string evidence, string advice, int leftOut);
}
