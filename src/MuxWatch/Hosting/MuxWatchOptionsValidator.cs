using Microsoft.Extensions.Options;

namespace MuxWatch.Hosting;

/// <summary>Rejects settings that cannot work, naming the setting, so that start-up fails instead of the host misbehaving later.</summary>
internal sealed class MuxWatchOptionsValidator : IValidateOptions<MuxWatchOptions>
{
    public ValidateOptionsResult Validate(string? name, MuxWatchOptions options)
    {
        var failures = new List<string>();
        if (options.RecentTimeoutCapacity is < 1 or > 100_000)
        {
            failures.Add($"{MuxWatchOptions.SectionName}:{nameof(MuxWatchOptions.RecentTimeoutCapacity)} must be between 1 and 100000 (was {options.RecentTimeoutCapacity}).");
        }

        if (options.CaptureQueueCapacity is < 1 or > 1_000_000)
        {
            failures.Add($"{MuxWatchOptions.SectionName}:{nameof(MuxWatchOptions.CaptureQueueCapacity)} must be between 1 and 1000000 (was {options.CaptureQueueCapacity}).");
        }

        return failures.Count == 0 ? ValidateOptionsResult.Success : ValidateOptionsResult.Fail(failures);
    }
}
