using MuxWatch.Timeouts;

namespace MuxWatch.Tests;

public sealed class SecretRedactorTests
{
    [Theory]
    [InlineData("myredis.cache:6380,password=hunter2,ssl=True,abortConnect=False", "hunter2")]
    [InlineData("myredis:6379,user=app-user,password=p@ss;w0rd", "app-user")]
    [InlineData("host:6379, Password = s3cr3t , connectTimeout=5000", "s3cr3t")]
    [InlineData("connecting to rediss://default:topsecret@cache.example:6380/0 failed", "topsecret")]
    [InlineData("connecting to redis://onlyuser@cache.example:6379 failed", "onlyuser")]
    [InlineData("sslPassword=certpass,host:6379", "certpass")]
    public void Credentials_are_masked(string text, string secret)
    {
        var redacted = SecretRedactor.Redact(text);

        Assert.DoesNotContain(secret, redacted, StringComparison.Ordinal);
        Assert.Contains(SecretRedactor.Mask, redacted, StringComparison.Ordinal);
    }

    [Fact]
    public void Text_without_credentials_is_unchanged()
    {
        const string message = "Timeout performing GET user:42 (5000ms), inst: 2, qu: 0, qs: 6, in: 0, WORKER: (Busy=40,Free=1,Min=8,Max=41), v: 3.1.31.17473";

        Assert.Equal(message, SecretRedactor.Redact(message));
    }

    [Fact]
    public void A_password_pasted_with_a_timeout_never_reaches_the_report()
    {
        var report = TimeoutMessageReader.Read(
            "2026-11-22 ERROR redis=cache:6380,password=hunter2,ssl=True StackExchange.Redis.RedisTimeoutException: Timeout performing GET k (5000ms), qs: 1, in: 0, clientName: app, note: password=hunter2");

        Assert.DoesNotContain("hunter2", report.Text, StringComparison.Ordinal);
        Assert.All(report.Fields, f => Assert.DoesNotContain("hunter2", f.Value.Raw, StringComparison.Ordinal));
        Assert.All(report.Notes, n => Assert.DoesNotContain("hunter2", n, StringComparison.Ordinal));
        Assert.Equal(RedisErrorKind.SyncTimeout, report.Kind);
        Assert.Equal(1, report.Number("qs"));
    }
}
