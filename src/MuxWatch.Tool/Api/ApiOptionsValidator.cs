using Microsoft.Extensions.Options;

namespace MuxWatch.Tool.Api;

/// <summary>Rejects <c>MuxWatch:Api</c> settings that cannot work, naming the setting (never a token's value).</summary>
internal sealed class ApiOptionsValidator : IValidateOptions<ApiOptions>
{
    public ValidateOptionsResult Validate(string? name, ApiOptions options)
    {
        const string section = ApiOptions.SectionName;
        var failures = new List<string>();
        AccessSettings.CheckToken(failures, $"{section}:{nameof(ApiOptions.BearerToken)}", options.BearerToken);
        AccessSettings.CheckPort(failures, $"{section}:{nameof(ApiOptions.Port)}", options.Port);
        AccessSettings.CheckRange(failures, $"{section}:{nameof(ApiOptions.MaxBodyBytes)}", options.MaxBodyBytes, 1024, 64 * 1024 * 1024);
        AccessSettings.CheckRange(failures, $"{section}:{nameof(ApiOptions.MaxMessagesPerRequest)}", options.MaxMessagesPerRequest, 1, 1_000_000);
        AccessSettings.CheckRange(failures, $"{section}:{nameof(ApiOptions.MaxConcurrentPosts)}", options.MaxConcurrentPosts, 1, 1024);
        AccessSettings.CheckRange(failures, $"{section}:{nameof(ApiOptions.MaxConnections)}", options.MaxConnections, 10, 100_000);
        if (options.BodyReadTimeout < TimeSpan.FromSeconds(1) || options.BodyReadTimeout > TimeSpan.FromMinutes(5))
        {
            failures.Add($"{section}:{nameof(ApiOptions.BodyReadTimeout)} must be between 00:00:01 and 00:05:00 (was {options.BodyReadTimeout}).");
        }

        return failures.Count == 0 ? ValidateOptionsResult.Success : ValidateOptionsResult.Fail(failures);
    }
}
