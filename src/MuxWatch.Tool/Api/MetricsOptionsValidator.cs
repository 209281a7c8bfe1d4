using Microsoft.Extensions.Options;

namespace MuxWatch.Tool.Api;

/// <summary>Rejects <c>MuxWatch:Metrics</c> settings that cannot work, naming the setting (never a token's value).</summary>
internal sealed class MetricsOptionsValidator : IValidateOptions<MetricsOptions>
{
    public ValidateOptionsResult Validate(string? name, MetricsOptions options)
    {
        var failures = new List<string>();
        AccessSettings.CheckToken(failures, $"{MetricsOptions.SectionName}:{nameof(MetricsOptions.BearerToken)}", options.BearerToken);
        AccessSettings.CheckPort(failures, $"{MetricsOptions.SectionName}:{nameof(MetricsOptions.Port)}", options.Port);
        return failures.Count == 0 ? ValidateOptionsResult.Success : ValidateOptionsResult.Fail(failures);
    }
}
