using Microsoft.Extensions.Options;

namespace MuxWatch.Configuration;

/// <summary>Rejects settings that cannot work, naming the setting, so that start-up fails instead of the host misbehaving later.</summary>
internal sealed class MuxWatchOptionsValidator : IValidateOptions<MuxWatchOptions>
{
    public ValidateOptionsResult Validate(string? name, MuxWatchOptions options)
    {
        var failures = new List<string>();
        if (options.MaxEndpointsPerMultiplexer is < 1 or > 10_000)
        {
            failures.Add($"{MuxWatchOptions.SectionName}:{nameof(MuxWatchOptions.MaxEndpointsPerMultiplexer)} must be between 1 and 10000 (was {options.MaxEndpointsPerMultiplexer}).");
        }

        if (options.RecentTimeoutCapacity is < 1 or > 100_000)
        {
            failures.Add($"{MuxWatchOptions.SectionName}:{nameof(MuxWatchOptions.RecentTimeoutCapacity)} must be between 1 and 100000 (was {options.RecentTimeoutCapacity}).");
        }

        if (options.CaptureQueueCapacity is < 1 or > 1_000_000)
        {
            failures.Add($"{MuxWatchOptions.SectionName}:{nameof(MuxWatchOptions.CaptureQueueCapacity)} must be between 1 and 1000000 (was {options.CaptureQueueCapacity}).");
        }

        if (options.TimeoutLogInterval < TimeSpan.Zero || options.TimeoutLogInterval > TimeSpan.FromHours(1))
        {
            failures.Add($"{MuxWatchOptions.SectionName}:{nameof(MuxWatchOptions.TimeoutLogInterval)} must be between 00:00:00 and 01:00:00 (was {options.TimeoutLogInterval}).");
        }

        if (options.ProbeInterval < TimeSpan.FromMilliseconds(10) || options.ProbeInterval > TimeSpan.FromHours(1))
        {
            failures.Add($"{MuxWatchOptions.SectionName}:{nameof(MuxWatchOptions.ProbeInterval)} must be between 00:00:00.010 and 01:00:00 (was {options.ProbeInterval}).");
        }

        if (options.ProbeTimeout < TimeSpan.FromMilliseconds(100) || options.ProbeTimeout > TimeSpan.FromMinutes(5))
        {
            failures.Add($"{MuxWatchOptions.SectionName}:{nameof(MuxWatchOptions.ProbeTimeout)} must be between 00:00:00.100 and 00:05:00 (was {options.ProbeTimeout}).");
        }

        Range(failures, nameof(MuxWatchOptions.PingInterval), options.PingInterval, TimeSpan.FromMilliseconds(10), TimeSpan.FromHours(1));
        Range(failures, nameof(MuxWatchOptions.ServerPollInterval), options.ServerPollInterval, TimeSpan.FromMilliseconds(100), TimeSpan.FromHours(1));
        Range(failures, nameof(MuxWatchOptions.ServerPollTimeout), options.ServerPollTimeout, TimeSpan.FromMilliseconds(100), TimeSpan.FromMinutes(1));
        Range(failures, nameof(MuxWatchOptions.ServerTimelineRetention), options.ServerTimelineRetention, TimeSpan.FromMinutes(1), TimeSpan.FromDays(1));
        Range(failures, nameof(MuxWatchOptions.WitnessInterval), options.WitnessInterval, TimeSpan.FromMilliseconds(100), TimeSpan.FromMinutes(1));
        Range(failures, nameof(MuxWatchOptions.WitnessQuietInterval), options.WitnessQuietInterval, TimeSpan.FromMilliseconds(100), TimeSpan.FromMinutes(1));
        Range(failures, nameof(MuxWatchOptions.PoolStackCaptureInterval), options.PoolStackCaptureInterval, TimeSpan.FromSeconds(1), TimeSpan.FromDays(1));
        Range(failures, nameof(MuxWatchOptions.CorrelationSettleTimeout), options.CorrelationSettleTimeout, TimeSpan.Zero, TimeSpan.FromMinutes(10));
        return failures.Count == 0 ? ValidateOptionsResult.Success : ValidateOptionsResult.Fail(failures);
    }

    private static void Range(List<string> failures, string setting, TimeSpan value, TimeSpan min, TimeSpan max)
    {
        if (value < min || value > max)
        {
            failures.Add($"{MuxWatchOptions.SectionName}:{setting} must be between {min:c} and {max:c} (was {value}).");
        }
    }
}
